"""The store side of retention and erasure (README: Retention and erasure).

Both stores implement these methods beside the store contract (stores/base.py):

- ``purge_expired(now, batch)``: remove up to ``batch`` memory facts and up to ``batch`` logged
  messages whose ``expires_at`` <= now, for good; one round trip. Expired items are already
  invisible to every read before they are purged (the read statements compare expires_at with now).
- ``forget_scope(scope)``: remove everything written with the scope's ids (a user's runs too, like a
  read of the user): entities with their relations, memory facts, logged messages, the
  conversation with its summary, the scope's partition record; one transaction.
- ``forget_entity(scope, canonical, pattern)``: remove the scope's entity with this canonical name
  with its relations, the memories that MENTION it or whose text matches ``pattern`` (a whole-word,
  case-insensitive regex of the name: ``name_pattern``), the logged messages matching it, and the
  rolling summary when it matches (dropped, and rewritten from the remaining messages by the next
  summary); one transaction.

Each returns an ``Erased`` report whose ``memory_ids`` let the history log be scrubbed too. The
embedded store also rewrites its snapshot and empties its journal afterwards, so no file on disk
keeps a copy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Protocol

from graphmem.types import Scope, utcnow


@dataclass
class Erased:
    memory_ids: list[str] = field(default_factory=list)  # memory facts removed
    entities: int = 0
    messages: int = 0
    summaries: int = 0  # rolling summaries dropped

    def merge(self, other: Erased) -> None:
        self.memory_ids += other.memory_ids
        self.entities += other.entities
        self.messages += other.messages
        self.summaries += other.summaries

    @property
    def memories(self) -> int:
        return len(self.memory_ids)


class ErasingStore(Protocol):
    """The methods above, which both stores implement beside the GraphStore contract (a store
    without them can serve memories but not retention or erasure)."""

    def purge_expired(self, now: datetime, batch: int) -> Erased: ...

    def forget_scope(self, scope: Scope) -> Erased: ...

    def forget_entity(self, scope: Scope, canonical: str, pattern: str) -> Erased: ...


def is_expired(expires_at: datetime | None, now: datetime | None = None) -> bool:
    return expires_at is not None and expires_at <= (now or utcnow())


def name_pattern(name: str) -> str:
    """A whole-word, case-insensitive regex of ``name`` that Python's ``re`` and Neo4j's (Java)
    regexes read alike: letters and digits are kept, every other character is escaped as a code point."""
    body = "".join(ch if ch.isalnum() else f"\\x{{{ord(ch):x}}}" for ch in name)
    return f"(?isuU).*(?<![\\w]){body}(?![\\w]).*"


def matches(pattern: str, text: str | None) -> bool:
    return bool(text) and re.fullmatch(_python(pattern), text or "") is not None


def _python(pattern: str) -> str:
    # Java writes a code point \x{h..h}; Python's re wants \U0000hhhh (and has Unicode \w by default)
    pattern = pattern.replace("(?isuU)", "(?isu)", 1)
    return re.sub(r"\\x\{([0-9a-f]+)\}", lambda m: f"\\U{int(m.group(1), 16):08x}", pattern)
