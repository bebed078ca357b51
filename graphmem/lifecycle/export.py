"""Export one scope's graph and memory facts from either store: GraphML (Gephi, yEd, networkx),
JSON (which ``graphmem load`` reads back into any store), or a Cypher script that loads it into
another Neo4j.

    graphmem export --user alice --format graphml --output alice.graphml
    graphmem export --user alice --format cypher --include-invalidated > alice.cypher

``--as-user`` (and --as-agent/--as-run) writes the copy as another scope: the scope's own node takes
the new user's name, ids are fresh (deterministic), memories carry the new ids.

Built on the store contract's ``entities``, ``get_all`` and ``list_memories`` only, so it reads the
embedded store and Neo4j alike, without an LLM or an embedder. Embeddings are not exported (they
belong to one embedder). The Cypher script is the one place where graphmem writes values into
Cypher text; every literal comes from :mod:`graphmem.schema.literals`.
"""

from __future__ import annotations

import io
import json
import uuid
from dataclasses import dataclass, field, replace
from typing import Any

import networkx as nx

from graphmem.config import MemoryConfig, Neo4jSettings
from graphmem.errors import ConfigError, GraphMemError, InvalidInputError, NotFoundError
from graphmem.factory import build_store
from graphmem.schema.counts import counted
from graphmem.schema.labels import type_label
from graphmem.schema.literals import cypher_identifier, cypher_map
from graphmem.schema.ontology import ATTRIBUTE_NAME, property_names
from graphmem.schema.resources import load_cypher
from graphmem.stores.base import GraphStore
from graphmem.types import Entity, MemoryItem, Relation, Scope, canonical_name, iso, sanitize_relation_type, utcnow

FORMATS = ("graphml", "json", "cypher")
#: The Neo4j store's uniqueness rules; an exported script creates them (IF NOT EXISTS) first.
_SCHEMA = ("schema_entity_id_unique", "schema_entity_scope_canonical_unique")
#: Embedding size assumed for reading when the config names none (only the embedded store checks it).
_FALLBACK_DIMS = 1536
_ID_NAMESPACE = uuid.UUID("5a0d7d3e-4f55-4a55-9a3c-6772617068ee")


@dataclass
class ScopeGraph:
    """One scope's entities, relations and memory facts, as the store returned them."""

    scope: Scope
    entities: list[Entity]
    relations: list[Relation]
    include_invalidated: bool = False
    memories: list[MemoryItem] = field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not self.entities and not self.memories


def read_graph(store: GraphStore, scope: Scope, include_invalidated: bool = False) -> ScopeGraph:
    return ScopeGraph(scope, store.entities(scope), store.get_all(scope, include_invalidated=include_invalidated),
                      include_invalidated, store.list_memories(scope))


def retarget(graph: ScopeGraph, target: Scope) -> ScopeGraph:
    """The graph as ``target``'s: the scope's own node renamed to the target's self name (so "I" of the
    copy is that node and the next add finds it), fresh deterministic ids, memories in the target scope."""
    if target == graph.scope:
        return graph
    old_self, new_self = canonical_name(graph.scope.self_name), target.self_name

    def new_id(old: str) -> str:
        return str(uuid.uuid5(_ID_NAMESPACE, f"{target.key}\x00{old}"))

    names = {}
    entities = []
    owned = set()  # the own node's id: facts that name it are written again on load, with the new name
    for e in graph.entities:
        own = e.canonical == old_self
        if own:
            owned.add(e.id)
        renamed = replace(e, id=new_id(e.id), name=new_self if own else e.name,
                          canonical=canonical_name(new_self) if own else e.canonical)
        names[e.id] = renamed.name
        entities.append(renamed)
    relations = [replace(r, id=new_id(r.id), source_id=new_id(r.source_id), destination_id=new_id(r.destination_id),
                         source=names.get(r.source_id, r.source), destination=names.get(r.destination_id, r.destination),
                         fact=None if {r.source_id, r.destination_id} & owned else r.fact)
                 for r in graph.relations]
    memories = [replace(m, id=new_id(m.id), user_id=target.user_id, agent_id=target.agent_id, run_id=target.run_id)
                for m in graph.memories]
    return ScopeGraph(target, entities, relations, graph.include_invalidated, memories)


# --- opening a store without an LLM or an embedder -----------------------------------------------


def reading_dims(config: MemoryConfig) -> int:
    """The embedding size of the configured embedder, without calling it (the embedded store checks it)."""
    settings = config.embedder.config
    dims = settings.get("dims")
    if isinstance(dims, int) and not isinstance(dims, bool) and dims > 0:
        return dims
    if config.embedder.provider == "hashing":
        from graphmem.embeddings import HashingEmbedder

        return HashingEmbedder().dims
    if config.embedder.provider == "openai":
        from graphmem.embeddings.openai import KNOWN_DIMS

        return KNOWN_DIMS.get(settings.get("model", "text-embedding-3-small"), _FALLBACK_DIMS)
    try:  # onnx: loading the local model is cheap and tells its size
        from graphmem.factory import build_embedder

        return build_embedder(config.embedder).dims
    except GraphMemError:
        return _FALLBACK_DIMS


def open_reader(config: dict[str, Any] | MemoryConfig | None) -> GraphStore:
    """The configured store, opened to read: no setup(), short connection timeouts, no LLM."""
    cfg = config if isinstance(config, MemoryConfig) else MemoryConfig.load(config)
    settings = cfg.graph_store.settings()
    if isinstance(settings, Neo4jSettings):
        return build_store(cfg.graph_store, reading_dims(cfg), connection_timeout=5.0, max_retry_time=2.0)
    from graphmem.stores.embedded import EmbeddedStore

    path = settings.path.expanduser()
    if not path.exists():
        raise NotFoundError(f"there is no embedded graph store at {path} (graph_store.config.path)")
    try:
        # read-only: the last durable state without the folder's lock, so a running app or `graphmem serve` may own it
        return EmbeddedStore(path=path, embedding_dims=reading_dims(cfg), read_only=True)
    except ConfigError as exc:
        raise ConfigError(f"{exc} (set embedder.config.dims to the store's embedding size)") from exc


def describe_store(store: GraphStore) -> str:
    from graphmem.stores.neo4j.store import redact_url

    if hasattr(store, "url"):
        return f"the Neo4j store at {redact_url(store.url)}"
    return f"the embedded store at {getattr(store, 'path', '?')}"


# --- formats ------------------------------------------------------------------------------------


def _entity_row(entity: Entity) -> dict[str, Any]:
    return {**entity.to_dict(), "canonical": entity.canonical}


def _relation_row(relation: Relation) -> dict[str, Any]:
    row: dict[str, Any] = dict(relation.to_dict())
    row.update(source_id=relation.source_id, destination_id=relation.destination_id,
               provenance=list(relation.provenance), retired_by=relation.retired_by, current=relation.is_current)
    return row


def _memory_row(item: MemoryItem) -> dict[str, Any]:
    row: dict[str, Any] = dict(item.to_dict())
    row.update(expires_at=iso(item.expires_at), said_at=iso(item.said_at))
    return {k: v for k, v in row.items() if v is not None}


def to_json(graph: ScopeGraph) -> str:
    doc = {
        "graphmem_export": 1,
        "scope": graph.scope.properties(),
        "exported_at": iso(utcnow()),
        "include_invalidated": graph.include_invalidated,
        "entities": [_entity_row(e) for e in graph.entities],
        "relations": [_relation_row(r) for r in graph.relations],
        "memories": [_memory_row(m) for m in graph.memories],
    }
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def attribute_properties(attributes: dict[str, Any]) -> dict[str, Any]:
    """Ontology attribute values as node properties ``attr_<name>`` (valid attribute names only)."""
    return property_names({k: v for k, v in attributes.items() if ATTRIBUTE_NAME.match(k) and v is not None})


def _present(values: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def to_networkx(graph: ScopeGraph) -> nx.MultiDiGraph[str]:
    """Nodes keyed by entity id, edges keyed by relation id; ``label`` attributes for Gephi."""
    g: nx.MultiDiGraph[str] = nx.MultiDiGraph(**_present({**graph.scope.properties(), "scope": graph.scope.key}))
    for e in graph.entities:
        g.add_node(e.id, **_present({"label": e.name, "name": e.name, "canonical": e.canonical,
                                      "entity_type": e.entity_type, "mentions": e.mentions,
                                      "created_at": iso(e.created_at), "updated_at": iso(e.updated_at),
                                      **attribute_properties(e.attributes)}))
    for r in graph.relations:
        g.add_edge(r.source_id, r.destination_id, key=r.id, **_present({
            "id": r.id, "label": r.relationship, "relationship": r.relationship, "current": r.is_current,
            "valid_at": iso(r.valid_at), "invalid_at": iso(r.invalid_at), "created_at": iso(r.created_at),
            "expired_at": iso(r.expired_at), "mentions": r.mentions, "provenance": " ".join(r.provenance) or None,
        }))
    for m in graph.memories:  # memory facts as nodes of their own kind (no edges: GraphML tools list them)
        g.add_node(m.id, **_present({"kind": "memory", "label": m.text, "memory": m.text, "hash": m.hash,
                                      "metadata": json.dumps(m.metadata, ensure_ascii=False), "role": m.role,
                                      "created_at": iso(m.created_at), "updated_at": iso(m.updated_at),
                                      "valid_at": iso(m.valid_at), "expires_at": iso(m.expires_at)}))
    return g


def to_graphml(graph: ScopeGraph) -> str:
    buffer = io.BytesIO()
    nx.write_graphml(to_networkx(graph), buffer, encoding="utf-8")
    return buffer.getvalue().decode("utf-8")


def _schema_statements() -> list[str]:
    out = []
    for name in _SCHEMA:
        code = [line for line in load_cypher(name).splitlines() if line.strip() and not line.lstrip().startswith("//")]
        out.append("\n".join(code) + ";")
    return out


def to_cypher(graph: ScopeGraph, target: Scope | None = None) -> str:
    """A script of CREATE statements that loads the graph into a Neo4j 5.26+ database.

    ``target`` writes it as another scope's graph (:func:`retarget`), e.g. to copy a user's graph
    within one database. Memories carry no embedding (it belongs to one embedder): the text index
    finds them; ``graphmem load`` of a JSON export re-embeds. User text never goes into comments.
    """
    graph = retarget(graph, target) if target is not None else graph
    scope = graph.scope
    kind = "current and invalidated" if graph.include_invalidated else "current only"
    lines = [
        f"// graphmem export: {counted(len(graph.entities), 'entity')}, {counted(len(graph.relations), 'relation')} ({kind}), "
        f"{counted(len(graph.memories), 'memory')}, {iso(utcnow())}",
        "// Load once into a Neo4j 5.26+ database: cypher-shell -f FILE (or paste into Neo4j Browser).",
        "// The scope is in each node's scope, user_id, agent_id and run_id properties.",
        *_schema_statements(),
    ]
    scope_props = {"scope": scope.key, **scope.properties()}
    for e in graph.entities:
        labels = ["Entity"] + [label for label in [type_label(e.entity_type)] if label]
        props: dict[str, Any] = {"id": e.id, "name": e.name, "canonical": e.canonical, "entity_type": e.entity_type,
                 "mentions": e.mentions, "created_at": e.created_at, "updated_at": e.updated_at, **scope_props,
                 **attribute_properties(e.attributes)}
        lines.append(f"CREATE (:{':'.join(cypher_identifier(label) for label in labels)} {cypher_map(props)});")
    for r in graph.relations:
        rel_type = cypher_identifier(sanitize_relation_type(r.relationship))
        props = {"id": r.id, "valid_at": r.valid_at, "invalid_at": r.invalid_at, "created_at": r.created_at,
                 "expired_at": r.expired_at, "mentions": r.mentions, "provenance": list(r.provenance),
                 "ids": scope.full_key, **scope_props}  # relations carry the scope's ids: reads narrow on them
        lines.append(
            f"MATCH (s:Entity {cypher_map({'id': r.source_id})}) "
            f"MATCH (d:Entity {cypher_map({'id': r.destination_id})}) "
            f"CREATE (s)-[:{rel_type} {cypher_map(props)}]->(d);"
        )
    lines += [f"CREATE (:Memory {cypher_map(_memory_properties(m, scope_props))});" for m in graph.memories]
    return "\n".join(lines) + "\n"


def _memory_properties(m: MemoryItem, scope_props: dict[str, Any]) -> dict[str, Any]:
    """The properties the Neo4j store gives a memory (its metadata as JSON plus ``meta.<key>`` scalars)."""
    from graphmem.stores.neo4j.memories import meta_properties, metadata_json

    metadata = metadata_json(m.metadata or {})
    return {"id": m.id, "text": m.text, "hash": m.hash, "metadata": metadata, **meta_properties(metadata), "role": m.role,
            "created_at": m.created_at, "updated_at": m.updated_at, "valid_at": m.valid_at or m.created_at,
            "said_at": m.said_at, "expires_at": m.expires_at, **scope_props}


def render(graph: ScopeGraph, fmt: str, target: Scope | None = None) -> str:
    if fmt == "cypher":
        return to_cypher(graph, target)
    graph = retarget(graph, target) if target is not None else graph
    if fmt == "graphml":
        return to_graphml(graph)
    if fmt == "json":
        return to_json(graph)
    raise InvalidInputError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")


def export_scope(config: dict[str, Any] | None, scope: Scope, fmt: str, include_invalidated: bool = False,
                 target: Scope | None = None) -> tuple[str, ScopeGraph, str]:
    """Read the scope from the configured store and render it; returns (text, graph, store description)."""
    with open_reader(config) as store:
        where = describe_store(store)
        graph = read_graph(store, scope, include_invalidated)
    if graph.is_empty:
        raise NotFoundError(f"{_named(scope)} has no graph in {where}: nothing to export")
    return render(graph, fmt, target), graph, where


def run(ns: Any, config: dict[str, Any] | None) -> int:
    """``graphmem export``: the rendered graph to --output (or stdout), a summary line to stderr."""
    import sys

    scope = Scope.of(ns.user_id, ns.agent_id, ns.run_id)
    target = None
    if ns.as_user or ns.as_agent or ns.as_run:
        target = Scope.of(ns.as_user, ns.as_agent, ns.as_run)
    text, graph, where = export_scope(config, scope, ns.format, ns.include_invalidated, target)
    if ns.output:
        try:
            ns.output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise InvalidInputError(f"cannot write {ns.output}: {exc.strerror}") from exc
    else:
        sys.stdout.write(text)
    print(f"exported {counted(len(graph.entities), 'entity')}, {counted(len(graph.relations), 'relation')} and "
          f"{counted(len(graph.memories), 'memory')} of {_named(scope)} "
          f"from {where} as {ns.format}{f' to {ns.output}' if ns.output else ''}", file=sys.stderr)
    return 0


def _named(scope: Scope) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in scope.properties().items() if v is not None)


__all__ = ["FORMATS", "ScopeGraph", "export_scope", "open_reader", "read_graph", "render", "retarget", "run", "to_cypher",
           "to_graphml", "to_json", "to_networkx"]
