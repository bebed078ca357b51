"""The Neo4j store's bulk statements: a batch of verbatim adds (infer=False) as one UNWIND
statement, and the idempotency keys of imports.

Datetimes go to the server as ISO-8601 strings, made DateTimes by write_verbatim.cypher: the
driver turns each Python datetime into a Bolt DateTime through its own time types (~100 us each,
more than the rest of a message's parameters), and a batch of 500 adds carries thousands.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from graphmem.stores.neo4j.conversation import message_rows
from graphmem.stores.neo4j.memories import memory_rows
from graphmem.stores.neo4j.values import Statement, utc
from graphmem.types import GraphWrite

_MEMORY_TIMES = ("expires_at", "valid_at", "said_at", "time_from", "time_to")
_MESSAGE_TIMES = ("timestamp", "expires_at")


def is_verbatim(write: GraphWrite) -> bool:
    """A write of new memory facts and messages only (what an infer=False add makes)."""
    return not (write.entities or write.relations or write.invalidations) and all(
        m.event == "ADD" and not m.entity_ids for m in write.memories
    )


def write_verbatim(writes: list[GraphWrite]) -> Statement:
    """write_verbatim.cypher for verbatim writes, in order; raises InvalidInputError for a malformed item."""
    keep = {w.scope.key: w.keep_messages for w in writes if w.messages}  # the last add's, per scope
    trims = [{"scope": scope, "keep": int(n)} for scope, n in keep.items() if n >= 0]
    return Statement("write_verbatim", {"adds": [_add_row(w) for w in writes], "trims": trims})


def _add_row(write: GraphWrite) -> dict[str, Any]:
    memories = memory_rows(write, {})
    for row in memories:
        del row["event"], row["mentions"], row["invalid_at"]  # an ADD: never invalid, mentions nothing
        _as_text(row, _MEMORY_TIMES)
    messages = message_rows(write)
    for row in messages:
        _as_text(row, _MESSAGE_TIMES)
    return {
        "scope": write.scope.key,
        "scope_ids": write.scope.properties(),
        "at": _iso(write.at),
        "add_id": write.add_id,
        "key": write.idempotency_key,
        "memories": memories,
        "messages": messages,
    }


def _as_text(row: dict[str, Any], fields: tuple[str, ...]) -> None:
    for name in fields:
        row[name] = _iso(row[name])


def _iso(value: datetime | None) -> str | None:
    aware = utc(value)
    return None if aware is None else aware.isoformat()


def imported_keys(keys: list[str]) -> Statement:
    return Statement("imported_keys", {"keys": list(keys)})


def idempotent_outcome(key: str) -> Statement:
    return Statement("idempotent_outcome", {"key": key})
