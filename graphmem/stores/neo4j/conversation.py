"""The Neo4j store's conversation-log statements: the messages an add appends, the log read and
the rolling summary. The log is (:Conversation {scope, last_seq})-[:HAS_MESSAGE]->(:Message {scope,
seq, add_id, role, content, timestamp}); the summary is a node of its own, (:Summary {scope, text,
through, updated_at}), so a summary being stored never holds the node an add locks to log messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, cast

from graphmem.stores.neo4j.values import Statement, from_db_time, utc
from graphmem.types import Conversation, GraphWrite, LoggedMessage, Scope, utcnow


def message_rows(write: GraphWrite) -> list[dict[str, Any]]:
    """The $messages parameter of write_graph.cypher: seq = the scope's last_seq + offset."""
    return [
        {"offset": i + 1, "role": m.role, "content": m.content, "timestamp": utc(m.timestamp), "expires_at": utc(m.expires_at)}
        for i, m in enumerate(write.messages)
    ]


def conversation(scope: Scope, limit: int) -> Statement:
    return Statement("conversation", {"scope": scope.key, "limit": max(0, int(limit)), "now": utc(utcnow())})


def set_summary(scope: Scope, text: str, through_seq: int, at: datetime) -> Statement:
    return Statement(
        "set_summary",
        {"scope": scope.key, "scope_ids": scope.properties(), "text": text, "through_seq": int(through_seq), "at": utc(at)},
    )


def to_conversation(record: Mapping[str, Any]) -> Conversation:
    log = record["conversation"] or {}
    messages = sorted(record["messages"], key=lambda m: m["seq"])  # read newest first
    return Conversation(
        messages=[
            LoggedMessage(m["role"], m["content"], cast(datetime, from_db_time(m["timestamp"])), m["add_id"] or "", int(m["seq"]))
            for m in messages
        ],
        summary=log.get("summary"),
        summary_through=int(log.get("summary_through") or 0),
        summary_updated_at=from_db_time(log.get("summary_updated_at")),
        last_seq=int(log.get("last_seq") or 0),
        adds_since_summary=int(record["adds_since_summary"]),
    )
