"""``graphmem load``: a JSON export (graphmem.lifecycle.export) written back into the configured store.

    graphmem export --user alice --format json --output alice.json
    graphmem load alice.json --config other.json                # the same scope, in another store
    graphmem load alice.json --as-user bob                      # or a copy as another user

The export carries no embeddings (they belong to one embedder): the loader embeds entity names,
relation facts and memory texts with the configured embedder, then writes everything in one add (one
transaction, with ADD history rows for the memories). A relation keeps the fact the export carries
(an export made before facts has none: the loader writes it by the wording rule, as ``graphmem
reindex`` does) and its provenance (the adds that asserted and retired it). Every relation version in the export is loaded with both time
axes as exported: event time (valid_at, invalid_at) and transaction time (created_at, expired_at),
and the live memories with when they were stored, so search(as_of=...) and search(known_at=...)
answer on the copy as on the original (an export made with --include-invalidated carries the
retired versions; deleted memories are not exported). The target scope must be empty: a
load never merges into a graph.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphmem.errors import GraphMemError, InvalidInputError
from graphmem.lifecycle.reindex import fact_of, meaning_of
from graphmem.schema.counts import counted
from graphmem.types import (
    Entity,
    EntityWrite,
    GraphWrite,
    MemoryItem,
    MemoryWrite,
    Relation,
    RelationWrite,
    Scope,
    canonical_name,
    new_id,
    parse_time,
    sanitize_relation_type,
    text_hash,
    utcnow,
)

if TYPE_CHECKING:
    from graphmem.lifecycle.export import ScopeGraph
    from graphmem.memory import Memory


def read_export(path: Path) -> ScopeGraph:
    """The graph a JSON export holds; a file that is not one is a clear InvalidInputError."""
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"cannot read the export {path}: {exc}") from exc
    if not isinstance(doc, dict) or doc.get("graphmem_export") != 1:
        raise InvalidInputError(f"{path} is not a graphmem JSON export (graphmem export --format json)")
    try:
        return _graph(doc)
    except (KeyError, TypeError, ValueError, GraphMemError) as exc:
        raise InvalidInputError(f"{path}: a malformed export ({type(exc).__name__}: {exc})") from exc


def _graph(doc: dict[str, Any]) -> ScopeGraph:
    from graphmem.ingest.checks import checked_metadata  # the limits every door applies (graphmem.schema.limits)
    from graphmem.lifecycle.export import ScopeGraph

    scope = Scope.of(**{k: doc["scope"].get(k) for k in ("user_id", "agent_id", "run_id")})
    entities = [Entity(str(e["id"]), str(e["name"]), str(e.get("canonical") or canonical_name(e["name"])),
                       str(e.get("entity_type") or "entity"), int(e.get("mentions") or 1), parse_time(e.get("created_at")),
                       parse_time(e.get("updated_at")), attributes=dict(e.get("attributes") or {}))
                for e in doc["entities"]]
    relations = [Relation(str(r["id"]), str(r["source_id"]), str(r["source"]), str(r["relationship"]), str(r["destination_id"]),
                          str(r["destination"]), parse_time(r.get("valid_at")), parse_time(r.get("invalid_at")),
                          created_at=parse_time(r.get("created_at")), expired_at=parse_time(r.get("expired_at")),
                          source_type=_text(r.get("source_type")), destination_type=_text(r.get("destination_type")),
                          fact=_text(r.get("fact")), provenance=_provenance(r.get("provenance")), retired_by=_text(r.get("retired_by")))
                 for r in doc["relations"]]
    memories = [MemoryItem(str(m["id"]), str(m["memory"]), str(m.get("hash") or text_hash(m["memory"])), metadata=checked_metadata(m.get("metadata")),
                           role=m.get("role"), created_at=parse_time(m.get("created_at")), valid_at=parse_time(m.get("valid_at")),
                           said_at=parse_time(m.get("said_at")), expires_at=parse_time(m.get("expires_at")))
                for m in doc.get("memories", [])]
    return ScopeGraph(scope, entities, relations, bool(doc.get("include_invalidated")), memories)


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _provenance(value: Any) -> list[str]:
    """The export's list of add ids (a relation's ``provenance`` as search returns it is a dict)."""
    if isinstance(value, dict):
        value = value.get("added_by")
    return [str(v) for v in value] if isinstance(value, list) else []


def load_graph(memory: Memory, graph: ScopeGraph) -> dict[str, int]:
    """Write ``graph`` into ``memory``'s store as one add; returns what was loaded."""
    from graphmem.ingest.add import AddOutcome

    scope = graph.scope
    if memory.store.entities(scope) or memory.store.list_memories(scope, limit=1):
        raise InvalidInputError(f"{scope.self_name!r} already has data in this store: load into an empty scope (or --as-user)")
    write = GraphWrite(add_id=new_id(), scope=scope, at=utcnow())
    types = {e.id: e.entity_type for e in graph.entities}
    typed = [replace(r, source_type=r.source_type or types.get(r.source_id), destination_type=r.destination_type or types.get(r.destination_id))
             for r in graph.relations]
    facts = [r.fact or fact_of(t, scope.self_name) for r, t in zip(graph.relations, typed, strict=True)]
    texts = [e.name for e in graph.entities] + [meaning_of(t, scope.self_name) for t in typed]
    vectors = memory.embedder.embed(texts) if texts else []
    write.entities = [EntityWrite(e.id, e.name, e.canonical, e.entity_type, v, True, dict(e.attributes))
                      for e, v in zip(graph.entities, vectors, strict=False)]
    write.relations = [RelationWrite(r.source_id, sanitize_relation_type(r.relationship), r.destination_id,
                                     valid_at=r.valid_at or write.at, invalid_at=r.invalid_at, id=r.id,
                                     created_at=r.created_at, expired_at=r.expired_at, fact=f, fact_embedding=v,
                                     provenance=list(r.provenance), retired_by=r.retired_by)
                       for r, f, v in zip(graph.relations, facts, vectors[len(graph.entities):], strict=True)]
    texts = [m.text for m in graph.memories]
    vectors = memory.embedder.embed(texts) if texts else []
    write.memories = [MemoryWrite("ADD", m.id, m.text, v, m.metadata, m.role, said_at=m.said_at, valid_at=m.valid_at or m.created_at,
                                  expires_at=m.expires_at, created_at=m.created_at)
                      for m, v in zip(graph.memories, vectors, strict=True)]
    memory._commit(AddOutcome(add_id=write.add_id, write=write))
    return {"entities": len(write.entities), "relations": len(write.relations), "memories": len(write.memories)}


def run(ns: Any, config: dict[str, Any] | None) -> int:
    """``graphmem load FILE``: a summary line on stdout."""
    from graphmem.lifecycle.export import retarget
    from graphmem.memory import Memory

    graph = read_export(ns.file)
    if ns.as_user or ns.as_agent or ns.as_run:
        graph = retarget(graph, Scope.of(ns.as_user, ns.as_agent, ns.as_run))
    with Memory(config) as memory:
        counts = load_graph(memory, graph)
    print(f"loaded {counted(counts['entities'], 'entity')}, {counted(counts['relations'], 'relation')} and "
          f"{counted(counts['memories'], 'memory')} "
          f"as {graph.scope.self_name!r}")
    return 0


def add_parser(sub: Any) -> None:
    p = sub.add_parser("load", help="load a JSON export into the configured store",
                       description="Write a graph exported with `graphmem export --format json` into the configured store "
                       "(entity names and memories re-embedded with its embedder; every relation version with both time axes). The scope must be empty.")
    p.add_argument("file", type=Path, help="the JSON export")
    g = p.add_argument_group("load as another scope (its own node renamed, fresh ids)")
    g.add_argument("--as-user", help="user id to load as")
    g.add_argument("--as-agent", help="agent id to load as")
    g.add_argument("--as-run", help="run id to load as")
    p.add_argument("--config", type=Path, help="JSON config file (default: $GRAPHMEM_CONFIG, ./graphmem.json, $GRAPHMEM_HOME/config.json)")
