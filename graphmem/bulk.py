"""Bulk adds: ``Memory.add_many`` (and through it ``graphmem import``).

Semantics, the same on every store:
- Each item is one add (messages, scope ids, metadata, timestamp) with an optional idempotency
  ``key``. A key is written in the add's own transaction; items whose key is already in the store
  are skipped, so an interrupted import run again continues where it stopped.
- infer=False: items are taken ``batch_size`` at a time; one embedding call for the batch's texts
  and one transaction for its adds (store.write_many). A batch commits whole or not at all, so an
  interruption leaves only whole adds. If a batch's write fails, its adds are retried one by one,
  so one bad add does not take the others with it.
- infer=True: adds of different scopes run concurrently (``workers`` threads), the adds of one
  scope in order, one after the other, each through the same engine path as ``Memory.add``.
- A bad item (no scope, bad messages or metadata) is reported in ``failed`` and never stops the rest.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from itertools import islice
from typing import TYPE_CHECKING, Any

from graphmem.errors import GraphMemError, InvalidInputError
from graphmem.history import HistoryEvent
from graphmem.messages import verbatim_messages
from graphmem.stages.conversation import Message
from graphmem.types import Scope

if TYPE_CHECKING:
    from graphmem.memory import Memory
    from graphmem.pipeline import AddOutcome

ITEM_KEYS = frozenset({"messages", "user_id", "agent_id", "run_id", "metadata", "timestamp", "expiration_date", "key"})


@dataclass
class BulkProgress:
    """Counters handed to the progress callback after every batch (infer=False) or add (infer=True)."""

    seen: int = 0  # items read so far
    added: int = 0  # adds committed by this run
    skipped: int = 0  # items whose key was imported already
    failed: int = 0
    messages: int = 0  # messages in the committed adds


@dataclass
class BulkFailure:
    index: int  # position of the item in the input (0-based)
    key: str | None
    error: str

    def to_dict(self) -> dict[str, Any]:
        return {"index": self.index, "key": self.key, "error": self.error}


@dataclass
class BadItem:
    """An input item that could not be read (e.g. a line that is not JSON): reported as failed."""

    error: str
    key: str | None = None


@dataclass
class _Item:
    index: int
    key: str | None
    scope: Scope
    messages: Any
    metadata: dict[str, Any]
    reference_time: datetime
    expiration_date: Any = None
    parsed: list[Message] = field(default_factory=list)


ProgressCallback = Callable[[BulkProgress], None]


class BulkAdder:
    """Runs one add_many call against ``memory``; ``stop`` (an Event) ends it after the running batch."""

    def __init__(
        self,
        memory: Memory,
        infer: bool,
        batch_size: int,
        workers: int,
        progress: ProgressCallback | None = None,
        stop: threading.Event | None = None,
    ) -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise InvalidInputError(f"batch_size must be a positive integer, got {batch_size!r}")
        if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
            raise InvalidInputError(f"workers must be a positive integer, got {workers!r}")
        self.memory = memory
        self.infer = infer
        self.batch_size = batch_size
        self.workers = workers
        self.progress = progress
        self.stop = stop or threading.Event()
        self.counts = BulkProgress()
        self.failures: list[BulkFailure] = []
        self._lock = threading.Lock()

    def run(self, items: Iterable[Any]) -> dict[str, Any]:
        chunk = self.batch_size if not self.infer else max(self.batch_size, self.workers * 8)
        numbered = enumerate(items)
        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="graphmem-bulk") if self.infer else None
        try:
            while not self.stop.is_set():
                batch = list(islice(numbered, chunk))
                if not batch:
                    break
                ready = self._fresh(self._checked(batch))
                if self.infer:
                    assert pool is not None
                    self._infer_batch(pool, ready)
                else:
                    self._verbatim_batch(ready)
                self._report()
        finally:
            if pool is not None:
                pool.shutdown(wait=True, cancel_futures=True)
        return {
            "added": self.counts.added,
            "skipped": self.counts.skipped,
            "failed": [f.to_dict() for f in self.failures],
            "messages": self.counts.messages,
            "seen": self.counts.seen,
            "stopped": self.stop.is_set(),
        }

    # -- checking ------------------------------------------------------------------------------

    def _checked(self, batch: list[tuple[int, Any]]) -> list[_Item]:
        from graphmem.memory import _checked_metadata, _reference_time
        from graphmem.retention import expiration
        from graphmem.types import utcnow

        out = []
        for index, raw in batch:
            self.counts.seen += 1
            try:
                if isinstance(raw, BadItem):
                    raise InvalidInputError(raw.error)
                if not isinstance(raw, dict):
                    raise InvalidInputError(f"an item must be a dict, got {type(raw).__name__}")
                unknown = set(raw) - ITEM_KEYS
                if unknown:
                    raise InvalidInputError(f"unknown item keys: {', '.join(sorted(unknown))}")
                key = raw.get("key")
                if key is not None and (not isinstance(key, str) or not key):
                    raise InvalidInputError("key must be a non-empty string")
                scope = Scope.of(raw.get("user_id"), raw.get("agent_id"), raw.get("run_id"))
                item = _Item(index, key, scope, raw.get("messages"), _checked_metadata(raw.get("metadata")),
                             _reference_time(raw.get("timestamp")), raw.get("expiration_date"))
                expiration(item.expiration_date, utcnow())  # a bad or past date fails this item only
                if not self.infer:
                    item.parsed = verbatim_messages(item.messages)
                out.append(item)
            except GraphMemError as exc:
                self._fail(index, raw.get("key") if isinstance(raw, dict) else getattr(raw, "key", None), exc)
        return out

    def _fresh(self, items: list[_Item]) -> list[_Item]:
        """Items whose key is not imported yet (and the first of two items with one key)."""
        keys = [i.key for i in items if i.key is not None]
        done = self.memory.store.imported_keys(list(dict.fromkeys(keys))) if keys else set()
        out, seen = [], set()
        for item in items:
            if item.key is not None and (item.key in done or item.key in seen):
                self.counts.skipped += 1
                continue
            if item.key is not None:
                seen.add(item.key)
            out.append(item)
        return out

    # -- infer=False: one transaction per batch --------------------------------------------------

    def _verbatim_batch(self, items: list[_Item]) -> None:
        items = [i for i in items if i.parsed or i.key is not None]
        if not items:
            return
        texts = [m.content for i in items for m in i.parsed]
        vectors = iter(self.memory.embedder.embed(texts) if texts else [])
        outcomes = [
            self.memory._verbatim_outcome(i.scope, i.parsed, [next(vectors) for _ in i.parsed], i.metadata, i.reference_time,
                                          i.expiration_date, i.key)
            for i in items
        ]
        try:
            self._commit_many(outcomes)
        except GraphMemError as batch_error:
            if len(items) == 1:
                self._fail(items[0].index, items[0].key, batch_error)
                return
            for item, outcome in zip(items, outcomes, strict=True):  # find the bad add; the others still go in
                try:
                    self._commit_many([outcome])
                except GraphMemError as exc:
                    self._fail(item.index, item.key, exc)
                else:
                    self._added(len(item.parsed))
            return
        for item in items:
            self._added(len(item.parsed))
        self.memory._retention.maybe_purge()

    def _commit_many(self, outcomes: list[AddOutcome]) -> None:
        """Memory._commit for a batch: history rows staged before, committed after the one transaction."""
        memory = self.memory
        staged = []
        for o in outcomes:
            assert o.write is not None
            events = [HistoryEvent(m.id, m.event, None, m.text, m.role) for m in o.write.memories]
            if events:
                staged.append((o.write.add_id, o.write.scope, events))
        add_ids = [a for a, _, _ in staged]
        memory.history_log.stage_many(staged)
        try:
            memory.store.write_many([o.write for o in outcomes if o.write is not None])
        except BaseException:
            memory.history_log.discard_many(add_ids)
            raise
        memory.history_log.commit_many(add_ids)

    # -- infer=True: scopes concurrently, each scope in order --------------------------------------

    def _infer_batch(self, pool: ThreadPoolExecutor, items: list[_Item]) -> None:
        by_scope: dict[str, list[_Item]] = {}
        for item in items:
            by_scope.setdefault(item.scope.key, []).append(item)
        for future in [pool.submit(self._scope_in_order, queue) for queue in by_scope.values()]:
            future.result()

    def _scope_in_order(self, queue: list[_Item]) -> None:
        for item in queue:
            if self.stop.is_set():
                return
            try:
                self.memory._add_checked(item.scope, item.messages, item.metadata, item.reference_time, True,
                                         item.expiration_date, item.key)
            except GraphMemError as exc:
                self._fail(item.index, item.key, exc)
            else:
                self._added(_message_count(item.messages))
            self._report()

    # -- accounting ------------------------------------------------------------------------------

    def _added(self, messages: int) -> None:
        with self._lock:
            self.counts.added += 1
            self.counts.messages += messages

    def _fail(self, index: int, key: str | None, exc: BaseException | None) -> None:
        with self._lock:
            self.counts.failed += 1
            self.failures.append(BulkFailure(index, key, f"{type(exc).__name__}: {exc}"))

    def _report(self) -> None:
        if self.progress is not None:
            with self._lock:
                snapshot = BulkProgress(**vars(self.counts))
            self.progress(snapshot)


def _message_count(messages: Any) -> int:
    return len(messages) if isinstance(messages, (list, tuple)) else 1
