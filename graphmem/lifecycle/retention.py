"""Retention and erasure for ``Memory`` (README: Retention and erasure).

Retention: an add's ``expiration_date`` (mem0's argument) and the configured TTLs
(``retention.memory_ttl_days``, ``retention.message_ttl_days``) stamp ``expires_at`` on the memory
facts and logged messages the add writes. From that moment every read skips them (the stores
compare with the clock); ``purge`` removes them for good in batches, and writes purge one batch
opportunistically at most every ``purge_every_seconds``.

Erasure: ``forget`` (a scope) and ``forget_entity`` (one entity) remove the data from the store,
drop or reset the rolling summary, and remove the history rows, leaving one audit row that says an
erasure happened (not what was erased).
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import date, datetime, timedelta, timezone
from typing import Any, cast

from graphmem.config import RetentionConfig
from graphmem.errors import GraphMemError, InvalidInputError
from graphmem.lifecycle.history import History
from graphmem.stores.base import GraphStore
from graphmem.stores.lifecycle import Erased, ErasingStore, name_pattern
from graphmem.types import GraphWrite, Scope, canonical_name, display_name, parse_time, utcnow

log = logging.getLogger(__name__)


def expiration(value: Any, now: datetime) -> datetime | None:
    """``expiration_date`` as a moment: a date (or "YYYY-MM-DD") lasts to the end of that day (UTC);
    a datetime or ISO-8601 string is exact. A moment already past is accepted (mem0 does; an import of
    old data carries such dates): what it stamps is expired at once, invisible, and purged later."""
    if value is None:
        return None
    if isinstance(value, date) and not isinstance(value, datetime):
        day = value
    elif isinstance(value, str) and len(value.strip()) == 10:
        try:
            day = date.fromisoformat(value.strip())
        except ValueError as exc:
            raise InvalidInputError(f"expiration_date is not a date (YYYY-MM-DD) or ISO-8601 time: {value!r}") from exc
    else:
        at = parse_time(value, field_name="expiration_date")
        assert at is not None
        return at
    return datetime(day.year, day.month, day.day, tzinfo=timezone.utc) + timedelta(days=1)


class Retention:
    def __init__(self, config: RetentionConfig, store: GraphStore, history: History) -> None:
        self.config = config
        self.store = store
        self._erasing = cast(ErasingStore, store)  # both shipped stores have stores/lifecycle.py's methods
        self.history = history
        self._last_purge = time.monotonic()
        self._lock = threading.Lock()

    def stamp(self, write: GraphWrite | None, expiration_date: Any) -> None:
        """Set expires_at on what the write adds: the earlier of expiration_date and the TTL."""
        if write is None:
            return
        now = utcnow()
        explicit = expiration(expiration_date, now)
        memory_at = _earliest(explicit, _ttl(now, self.config.memory_ttl_days))
        message_at = _earliest(explicit, _ttl(now, self.config.message_ttl_days))
        for m in write.memories:
            if m.event == "ADD":
                m.expires_at = memory_at
        for msg in write.messages:
            msg.expires_at = message_at

    def maybe_purge(self) -> None:
        """After a write: one batch at most every purge_every_seconds; a failure is only logged."""
        every = self.config.purge_every_seconds
        if every <= 0 or time.monotonic() - self._last_purge < every or not self._lock.acquire(blocking=False):
            return
        try:
            self._last_purge = time.monotonic()
            self._purge_batch(utcnow())
        except GraphMemError:
            log.warning("opportunistic purge of expired data failed; the next write retries", exc_info=True)
        finally:
            self._lock.release()

    def purge(self) -> dict[str, int]:
        """Remove every expired memory and message now, batch by batch."""
        now = utcnow()
        total = Erased()
        with self._lock:
            while True:
                erased = self._purge_batch(now)
                total.merge(erased)
                if erased.memories < self.config.purge_batch and erased.messages < self.config.purge_batch:
                    break
        return {"memories": total.memories, "messages": total.messages}

    def _purge_batch(self, now: datetime) -> Erased:
        erased = self._erasing.purge_expired(now, self.config.purge_batch)
        if erased.memory_ids:
            self.history.erase_memories(erased.memory_ids, "EXPIRE")
        return erased

    # --- erasure ------------------------------------------------------------------------------

    def forget(self, scope: Scope) -> dict[str, int]:
        erased = self._erasing.forget_scope(scope)
        removed = self.history.erase_scope(scope, "FORGET")
        return _report(erased, removed)

    def forget_entity(self, scope: Scope, name: str) -> dict[str, int]:
        shown = display_name(name)
        key = canonical_name(shown)
        if not key:
            raise InvalidInputError("forget_entity needs a non-empty entity name")
        pattern = name_pattern(shown)
        erased = self._erasing.forget_entity(scope, key, pattern)
        removed = 0
        if erased.memory_ids:
            removed += self.history.erase_memories(erased.memory_ids, "FORGET_ENTITY")
        removed += self.history.erase_matching(scope, pattern, "FORGET_ENTITY")
        return _report(erased, removed)


def _report(erased: Erased, history_rows: int) -> dict[str, int]:
    return {
        "entities": erased.entities,
        "memories": erased.memories,
        "messages": erased.messages,
        "summaries": erased.summaries,
        "history_rows": history_rows,
    }


def _ttl(now: datetime, days: float | None) -> datetime | None:
    return None if days is None else now + timedelta(days=days)


def _earliest(*moments: datetime | None) -> datetime | None:
    known = [m for m in moments if m is not None]
    return min(known) if known else None
