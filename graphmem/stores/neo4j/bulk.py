"""The Neo4j store's bulk statements: a batch of verbatim adds (infer=False) as one UNWIND
statement, and the idempotency keys of imports."""

from __future__ import annotations

from typing import Any

from graphmem.stores.neo4j.conversation import message_rows
from graphmem.stores.neo4j.memories import memory_rows
from graphmem.stores.neo4j.values import Statement, utc
from graphmem.types import GraphWrite


def is_verbatim(write: GraphWrite) -> bool:
    """A write of new memory facts and messages only (what an infer=False add makes)."""
    return not (write.entities or write.relations or write.invalidations) and all(
        m.event == "ADD" and not m.entity_ids for m in write.memories
    )


def write_verbatim(writes: list[GraphWrite]) -> Statement:
    """write_verbatim.cypher for verbatim writes, in order; raises InvalidInputError for a malformed item."""
    return Statement("write_verbatim", {"adds": [_add_row(w) for w in writes]})


def _add_row(write: GraphWrite) -> dict[str, Any]:
    memories = memory_rows(write, {})
    for row in memories:
        del row["event"], row["mentions"]
    return {
        "scope": write.scope.key,
        "scope_ids": write.scope.properties(),
        "at": utc(write.at),
        "add_id": write.add_id,
        "key": write.idempotency_key,
        "keep_messages": int(write.keep_messages),
        "memories": memories,
        "messages": message_rows(write),
    }


def imported_keys(keys: list[str]) -> Statement:
    return Statement("imported_keys", {"keys": list(keys)})
