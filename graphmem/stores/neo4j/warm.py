"""Plan the add and search statements at setup, so the first add and search after a server start
do not pay their query planning (1-5 s each for the large statements, measured in
docs/add-modes.md).

Every statement is sent with one map parameter (values.Statement.run_args), so Neo4j keeps one plan
per statement text whatever the values: planning a statement once with any values serves every
later call. Reads run for real on a scope that holds nothing (they return nothing); writes are only
planned (EXPLAIN), never run. The statements are planned concurrently, each in its own session, so
setup waits for the longest one, not for their sum.
"""

from __future__ import annotations

from datetime import datetime, timezone

from graphmem.stores.base import AddContextQuery, EntityCandidate, GraphQuery, MemoryQuery
from graphmem.stores.memory_context import ContextQuery
from graphmem.stores.neo4j import conversation as log_queries
from graphmem.stores.neo4j import memories as memory_queries
from graphmem.stores.neo4j import queries, single_pass
from graphmem.stores.neo4j.values import Statement, VectorPlan, packed_text
from graphmem.types import (
    EntityWrite,
    GraphWrite,
    Invalidation,
    LoggedMessage,
    MemoryWrite,
    RelationWrite,
    Scope,
    new_id,
)

#: a scope no user can name (ids are matched as given; this one is never written)
WARM_SCOPE = Scope.of(user_id="graphmem-plan-warming")
_AT = datetime(2000, 1, 1, tzinfo=timezone.utc)


def reads(dims: int, plan: VectorPlan, relation_limit: int) -> list[Statement]:
    """The add's and search's read statements, with values of the types they are sent with."""
    v = [1.0 / dims**0.5] * dims
    s = WARM_SCOPE
    return [
        log_queries.conversation(s, 10),
        queries.resolve(s, [EntityCandidate("warm", v, True)], 0.7, [v], 5, [], 20, plan),
        single_pass.context_statement(s, AddContextQuery("warm", v, "warm up"), plan),
        queries.search_graph(s, GraphQuery(v, "warm up", ["warm"]), plan, relation_limit),
        memory_queries.search_memories(s, MemoryQuery(v, "warm up"), plan),
        memory_queries.memory_context(s, ContextQuery(v, ["none"])),
    ]


def writes() -> list[Statement]:
    """The add's write statements as EXPLAIN (planned, never run): the scope lock, the graph write
    (both forms: in the lock's transaction and on its own), attributes, the summary."""
    write = _sample_write()
    found = [queries.scope_lock(WARM_SCOPE), queries.write_graph(write, unlock=True), queries.write_graph(write),
             log_queries.set_summary(WARM_SCOPE, "warm", 1, _AT), queries.set_entity_attributes(write)]
    return [explain(stmt) for stmt in found if stmt is not None]


def explain(stmt: Statement) -> Statement:
    """``stmt`` planned only: the packed text behind EXPLAIN, the same parameters."""
    text, params = stmt.run_args()
    return Statement(stmt.name, params, text_override="EXPLAIN " + text)


def _sample_write() -> GraphWrite:
    """A write holding one of everything, so every part of write_graph is planned with list values."""
    a, b = new_id(), new_id()
    write = GraphWrite(add_id=new_id(), scope=WARM_SCOPE, at=_AT)
    write.entities = [EntityWrite(a, "warm", "warm", "thing", [0.0], True, {"colour": "red"}),
                      EntityWrite(b, "up", "up", "thing", [0.0], False)]
    write.relations = [RelationWrite(a, "WARMS", b, valid_at=_AT)]
    write.invalidations = [Invalidation(new_id(), _AT)]
    write.memories = [MemoryWrite("ADD", new_id(), "warm", [0.0], {}, "user", [a]), MemoryWrite("DELETE", new_id())]
    write.messages = [LoggedMessage("user", "warm", _AT)]
    return write


__all__ = ["WARM_SCOPE", "explain", "packed_text", "reads", "writes"]
