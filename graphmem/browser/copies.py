"""Display copies: an embedded store's scope copied into a Neo4j for Neo4j Browser, kept apart from
any store's data (issue 45).

Two rules keep them apart. A copy is written only into a database that holds no data of a graphmem
Neo4j store (cypher/browser/store_data.cypher; by default ``browse`` starts a launcher server of its
own for copies, on other ports than the store's default). And a copy lives in a scope of its own,
``display-copy:`` + the scope's key: every read of the Neo4j store matches a scope key (a JSON
list, never that prefix), so even a store later pointed at the same database never returns a copy.
The saved views match the ids (user_id, ...), so they show a copy like the store's own data.
"""

from __future__ import annotations

from typing import Any, Protocol

from graphmem.browser.style import labels_for
from graphmem.errors import StoreError
from graphmem.lifecycle.export import attribute_properties
from graphmem.schema.labels import type_label
from graphmem.types import Relation, Scope

#: the scope prefix of display copies (a store's scope key is a JSON list: it starts with "[")
COPY_PREFIX = "display-copy:"
#: bolt and HTTP ports of the launcher server that holds display copies: not the launcher's default
#: 7687/7474, which a Neo4j store's default url names (each bolt port is its own server and data)
DISPLAY_PORTS = (7688, 7475)


class Runs(Protocol):
    """What copying needs of browse's connection (browse._Connection)."""

    def run(self, name: str, params: dict[str, Any], *, write: bool = False) -> list[dict[str, Any]]: ...


def copy_key(scope: Scope) -> str:
    """The scope key a display copy of ``scope`` is written under."""
    return COPY_PREFIX + scope.key


def refuse_store_data(connection: Runs, where: str) -> None:
    """StoreError when the database holds data of a graphmem Neo4j store: a copy never joins it."""
    if connection.run("store_data", {"prefix": COPY_PREFIX})[0]["holds_store_data"]:
        raise StoreError(
            f"the Neo4j at {where} holds data of a graphmem Neo4j store; graphmem browse puts display copies of "
            f"the embedded store only in a Neo4j of their own (by default the launcher on --bolt-port {DISPLAY_PORTS[0]} "
            f"--http-port {DISPLAY_PORTS[1]}), never beside a store's data. Browse with other ports, or with a config "
            "whose graph_store is that Neo4j to see its own data.")


def copy_into(connection: Runs, graph: Any, ontology: Any = None) -> tuple[int, int, int]:
    """Replace the earlier display copy of the graph's scope with ``graph`` (an export.read_graph
    result); returns (entities, relations, entities with a styled type)."""
    scope: Scope = graph.scope
    key = copy_key(scope)
    labels = labels_for(ontology)
    scope_props = {"scope": key, **{k: v for k, v in scope.properties().items() if v is not None}}
    source = f"embedded:{scope.key}"
    entities = [{"labels": ["Entity"], "properties": {
        "id": e.id, "name": e.name, "canonical": e.canonical, "entity_type": e.entity_type, "mentions": e.mentions,
        "created_at": e.created_at, "updated_at": e.updated_at, "copied_from": source, **scope_props,
        **attribute_properties(e.attributes)}}
        for e in graph.entities]
    relations = [_relation_payload(r, key) for r in graph.relations]
    row = connection.run("copy_scope", {"scope": key, "entities": entities, "relations": relations}, write=True)[0]
    styled = sum(1 for e in graph.entities if type_label(e.entity_type) or e.entity_type in labels)
    return int(row["entities"]), int(row["relations"]), styled


def _relation_payload(relation: Relation, key: str) -> dict[str, Any]:
    props = {"id": relation.id, "scope": key, "valid_at": relation.valid_at, "invalid_at": relation.invalid_at,
             "created_at": relation.created_at, "expired_at": relation.expired_at, "mentions": relation.mentions,
             "provenance": list(relation.provenance)}
    return {"type": relation.relationship, "source_id": relation.source_id, "destination_id": relation.destination_id,
            "properties": {k: v for k, v in props.items() if v is not None}}


__all__ = ["COPY_PREFIX", "DISPLAY_PORTS", "copy_into", "copy_key", "refuse_store_data"]
