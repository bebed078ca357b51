"""A create-only batch of graph writes as one statement (write_created_graph.cypher).

Loading data that is new by construction (a bulk load of fresh scopes, the search-at-scale
benchmark) through write_graph.cypher costs one statement per write, and each relation looks for a
current instance of itself by expanding its source's relationships: quadratic for a hub such as a
user's own node. A write qualifies when it only creates: every entity is new (and named once in the
batch), relations and mentions only join entities the batch creates (each triple once), memory facts
are ADDs, and there are no invalidations, messages or ontology attributes. Such a batch runs as one
UNWIND statement with the same nodes, relationships and properties write_graph would make; if an
entity turns out to exist already (a name stored before, or a concurrent writer), the transaction
is rolled back and the caller writes the batch through write_graph instead.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import neo4j

from graphmem.stores.neo4j.queries import write_graph
from graphmem.stores.neo4j.tracing import statement_span
from graphmem.stores.neo4j.values import Statement
from graphmem.types import GraphWrite


class NotCreateOnly(Exception):
    """Raised inside the transaction to roll it back: the batch names a stored entity."""


def creates_only(writes: list[GraphWrite]) -> bool:
    """True when every write of the batch only creates (see the module doc). A relation or mention
    may also join entities an earlier write of the batch created in the same scope: write_graph
    would find them by id, with no current relation but those of the batch."""
    names: set[tuple[str, str]] = set()
    ids: set[str] = set()
    memory_ids: set[str] = set()
    created: dict[str, set[str]] = {}  # scope key -> ids of the entities the batch created so far
    triples: set[tuple[str, str, str, str]] = set()
    for w in writes:
        if w.invalidations or w.messages:
            return False
        own = created.setdefault(w.scope.key, set())
        for e in w.entities:
            key = (w.scope.key, e.canonical)
            if not e.is_new or e.attributes or key in names or e.id in ids:
                return False
            names.add(key)
            ids.add(e.id)
            own.add(e.id)
        for r in w.relations:
            triple = (w.scope.key, r.source_id, r.relationship, r.destination_id)
            if triple in triples or r.source_id not in own or r.destination_id not in own:
                return False
            triples.add(triple)
        for m in w.memories:
            if m.event != "ADD" or m.id in memory_ids or not set(m.entity_ids) <= own:
                return False
            memory_ids.add(m.id)
    return True


#: Row fields sent as ISO-8601 text and read back with datetime() in the statement: the driver
#: encodes a Python datetime in Python (about 0.25 ms each), ISO text is packed natively.
_TIMES = {
    "entities": (),
    "relations": ("valid_at", "invalid_at"),
    "memories": ("valid_at", "invalid_at", "expires_at", "said_at", "time_from", "time_to"),
}


def write_created(writes: list[GraphWrite]) -> Statement:
    """The batch's statement; raises InvalidInputError for a malformed item (nothing written)."""
    rows = [_row(dict(write_graph(w).params)) for w in writes]
    return Statement("write_created_graph", {"writes": rows, "scopes": sorted({w.scope.key for w in writes})})


def _row(params: dict[str, Any]) -> dict[str, Any]:
    for unused in ("invalidations", "messages", "keep_messages"):
        del params[unused]
    params["at"] = _iso(params["at"])
    for kind, fields in _TIMES.items():
        for item in params[kind]:
            for name in fields:
                item[name] = _iso(item[name])
    return params


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def run(tx: neo4j.ManagedTransaction, stmt: Statement, count: Callable[[], None]) -> list[dict[str, Any]]:
    """Run the batch in ``tx``; raises NotCreateOnly (rolling it back) when an entity existed.
    Returns {scope, scope_size, partitioned} per scope of the batch."""
    count()
    with statement_span(None, None, stmt, "write"):  # its store's address is not known here
        rows = list(tx.run(*stmt.run_args()))
    if rows and (rows[0]["existing"] or rows[0]["missing"]):
        raise NotCreateOnly
    return [{"scope": r["scope"], "scope_size": int(r["scope_size"]), "partitioned": bool(r["partitioned"])} for r in rows]
