"""The embedded store's conversation logs: per scope the newest messages and the rolling summary.

Journal operations (applied by MemoryGraph):
    ["messages", scope_key, [message attrs with seq], keep]   append, then keep the newest ``keep``
    ["summary", scope_key, text, through_seq, at]              set when through_seq is newer
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, cast

from graphmem.types import Conversation, LoggedMessage, iso, parse_time, utcnow


@dataclass
class _Log:
    last_seq: int = 0
    messages: list[dict[str, Any]] = field(default_factory=list)  # oldest first
    summary: str | None = None
    summary_through: int = 0
    summary_updated_at: str | None = None


class ConversationLogs:
    def __init__(self) -> None:
        self.logs: dict[str, _Log] = {}

    def next_seq(self, key: str) -> int:
        log = self.logs.get(key)
        return (log.last_seq if log else 0) + 1

    def append(self, key: str, messages: list[dict[str, Any]], keep: int) -> None:
        log = self.logs.setdefault(key, _Log())
        log.messages.extend(messages)
        log.last_seq = max([log.last_seq] + [m["seq"] for m in messages])
        if keep >= 0 and len(log.messages) > keep:
            del log.messages[: len(log.messages) - keep]

    def set_summary(self, key: str, text: str, through: int, at: str) -> bool:
        log = self.logs.setdefault(key, _Log())
        if through <= log.summary_through and log.summary is not None:
            return False
        log.summary, log.summary_through, log.summary_updated_at = text, through, at
        return True

    def drop_messages(self, seqs: dict[str, list[int]]) -> None:
        """Erasure: the messages with these sequence numbers, per scope key."""
        for key, gone in seqs.items():
            log = self.logs.get(key)
            if log is not None:
                drop = set(gone)
                log.messages = [m for m in log.messages if m["seq"] not in drop]

    def drop_summaries(self, keys: list[str]) -> None:
        """Erasure: the summaries go; the next one is written again from the remaining messages."""
        for key in keys:
            log = self.logs.get(key)
            if log is not None:
                log.summary, log.summary_through, log.summary_updated_at = None, 0, None

    def summary_is_newer(self, key: str, through: int) -> bool:
        log = self.logs.get(key)
        return log is None or log.summary is None or through > log.summary_through

    def drop(self, key: str) -> None:
        self.logs.pop(key, None)

    def read(self, key: str, limit: int) -> Conversation:
        log = self.logs.get(key)
        if log is None:
            return Conversation()
        since = {m["add_id"] for m in log.messages if m["seq"] > log.summary_through}
        now = utcnow()
        live = [m for m in log.messages if not m.get("expires_at") or now < parse_time(m["expires_at"])]  # type: ignore[operator]  # a set expires_at is an ISO time, never None
        recent = live[-limit:] if limit > 0 else []
        return Conversation(
            messages=[
                LoggedMessage(m["role"], m["content"], cast(datetime, parse_time(m["timestamp"])), m["add_id"], m["seq"]) for m in recent
            ],
            summary=log.summary,
            summary_through=log.summary_through,
            summary_updated_at=parse_time(log.summary_updated_at),
            last_seq=log.last_seq,
            adds_since_summary=len(since),
        )

    def snapshot(self) -> dict[str, Any]:
        return {key: vars(log) for key, log in self.logs.items()}

    def load(self, data: dict[str, Any]) -> None:
        self.logs = {key: _Log(**value) for key, value in data.items()}


def message_attrs(m: LoggedMessage, seq: int, add_id: str) -> dict[str, Any]:
    return {"seq": seq, "add_id": add_id, "role": m.role, "content": m.content, "timestamp": iso(m.timestamp),
            "expires_at": iso(m.expires_at)}
