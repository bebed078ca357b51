"""Bulk adds: ``Memory.add_many`` (and through it ``graphmem import``).

Semantics, the same on every store:
- Each item is one add (messages, scope ids, metadata, timestamp) with an optional idempotency
  ``key``. A key is written in the add's own transaction; items whose key is already in the store
  are skipped, so an interrupted import run again continues where it stopped.
- infer=False (bulk_verbatim.py): scopes are spread over ``workers`` lanes by a hash of the scope
  key; a lane writes its items ``batch_size`` at a time, one batch after the other in input order,
  so the adds of one scope keep their order while the other lanes embed and write theirs. Per
  batch: one embedding call for its texts and one transaction for its adds (store.write_many). A
  batch commits whole or not at all, so an interruption leaves only whole adds. If a batch's write
  fails, its adds are retried one by one, so one bad add does not take the others with it.
- infer=True: adds of different scopes run concurrently (``workers`` threads), the adds of one
  scope in order, one after the other, each through the same engine path as ``Memory.add``.
- A bad item (no scope, bad messages or metadata) is reported in ``failed`` and never stops the rest.
- ``stop`` (Ctrl-C in ``graphmem import``): no new batch or add starts; running ones finish.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import islice
from typing import Any

from graphmem.errors import GraphMemError, InvalidInputError, LimitExceededError
from graphmem.ingest.bulk_host import BulkHost, BulkItem
from graphmem.ingest.checks import checked_metadata, reference_time
from graphmem.ingest.messages import verbatim_messages
from graphmem.ingest.verbatim import VerbatimLanes
from graphmem.lifecycle.retention import expiration
from graphmem.schema import limits
from graphmem.schema.arguments import check_flag
from graphmem.types import Scope, utcnow

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


ProgressCallback = Callable[[BulkProgress], None]


class BulkAdder:
    """Runs one add_many call against ``memory``; ``stop`` (an Event) ends it after the running batch."""

    def __init__(
        self,
        memory: BulkHost,
        infer: bool,
        batch_size: int,
        workers: int,
        progress: ProgressCallback | None = None,
        stop: threading.Event | None = None,
    ) -> None:
        _count("batch_size", batch_size, limits.BATCH_SIZE)
        _count("workers", workers, limits.BULK_WORKERS)
        self.memory = memory
        self.infer = check_flag("infer", infer)
        self.batch_size = batch_size
        self.workers = workers
        self.progress = progress
        self.stop = stop or threading.Event()
        self.counts = BulkProgress()
        self.failures: list[BulkFailure] = []
        self.adds: list[tuple[int, str | None, str]] = []  # (index, key, add_id) of each committed add
        self._lock = threading.Lock()
        self._report_lock = threading.Lock()

    def run(self, items: Iterable[Any]) -> dict[str, Any]:
        if isinstance(items, (str, bytes, dict)) or not isinstance(items, Iterable):
            raise InvalidInputError(f"add_many takes an iterable of item dicts, got {type(items).__name__}")
        if self.infer:
            self._run_infer(enumerate(items))
        else:
            self._run_verbatim(enumerate(items))
        return {
            "added": self.counts.added,
            "skipped": self.counts.skipped,
            "failed": [f.to_dict() for f in sorted(self.failures, key=lambda f: f.index)],  # lanes finish in any order
            "adds": [{"index": i, "key": k, "add_id": a} for i, k, a in sorted(self.adds, key=lambda add: add[0])],
            "messages": self.counts.messages,
            "seen": self.counts.seen,
            "stopped": self.stop.is_set(),
        }

    def _run_verbatim(self, numbered: Iterator[tuple[int, Any]]) -> None:
        lanes = VerbatimLanes(self)
        finished = False
        try:
            while not self.stop.is_set():
                chunk = list(islice(numbered, self.batch_size))
                if not chunk:
                    break
                lanes.route(self._checked(chunk))
            finished = True
        finally:
            lanes.close(flush=finished)  # an exception here (Ctrl-C) drops what no lane has started
        self.report()

    def _run_infer(self, numbered: Iterator[tuple[int, Any]]) -> None:
        chunk = max(self.batch_size, self.workers * 8)
        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="graphmem-bulk")
        try:
            while not self.stop.is_set():
                batch = list(islice(numbered, chunk))
                if not batch:
                    break
                self._infer_batch(pool, self.fresh(self._checked(batch)))
                self.report()
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    # -- checking ------------------------------------------------------------------------------

    def _checked(self, batch: list[tuple[int, Any]]) -> list[BulkItem]:
        out = []
        for index, raw in batch:
            with self._lock:
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
                item = BulkItem(index, key, scope, raw.get("messages"), checked_metadata(raw.get("metadata")),
                             reference_time(raw.get("timestamp")), raw.get("expiration_date"))
                expiration(item.expiration_date, utcnow())  # a bad or past date fails this item only
                if not self.infer:
                    item.parsed = verbatim_messages(item.messages)
                out.append(item)
            except GraphMemError as exc:
                self.fail(index, raw.get("key") if isinstance(raw, dict) else getattr(raw, "key", None), exc)
        return out

    def fresh(self, items: list[BulkItem]) -> list[BulkItem]:
        """Items whose key is not imported yet (and the first of two items with one key)."""
        keys = [i.key for i in items if i.key is not None]
        done = self.memory.store.imported_keys(list(dict.fromkeys(keys))) if keys else set()
        out, seen = [], set()
        for item in items:
            if item.key is not None and (item.key in done or item.key in seen):
                self.skip()
                continue
            if item.key is not None:
                seen.add(item.key)
            out.append(item)
        return out

    # -- infer=True: scopes concurrently, each scope in order --------------------------------------

    def _infer_batch(self, pool: ThreadPoolExecutor, items: list[BulkItem]) -> None:
        by_scope: dict[str, list[BulkItem]] = {}
        for item in items:
            by_scope.setdefault(item.scope.key, []).append(item)
        for future in [pool.submit(self._scope_in_order, queue) for queue in by_scope.values()]:
            future.result()

    def _scope_in_order(self, queue: list[BulkItem]) -> None:
        for item in queue:
            if self.stop.is_set():
                return
            try:
                done = self.memory._add_checked(item.scope, item.messages, item.metadata, item.reference_time, True,
                                                item.expiration_date, item.key)
            except GraphMemError as exc:
                self.fail(item.index, item.key, exc)
            else:
                self.added(_message_count(item.messages), item, done["add_id"])
            self.report()

    # -- accounting ------------------------------------------------------------------------------

    def added(self, messages: int, item: BulkItem, add_id: str) -> None:
        with self._lock:
            self.counts.added += 1
            self.counts.messages += messages
            self.adds.append((item.index, item.key, add_id))

    def skip(self) -> None:
        with self._lock:
            self.counts.skipped += 1

    def fail(self, index: int, key: str | None, exc: BaseException | None) -> None:
        with self._lock:
            self.counts.failed += 1
            self.failures.append(BulkFailure(index, key, f"{type(exc).__name__}: {exc}"))

    def report(self) -> None:
        """Hand the counters to the progress callback (one call at a time, whichever thread)."""
        if self.progress is not None:
            with self._report_lock:
                with self._lock:
                    snapshot = BulkProgress(**vars(self.counts))
                self.progress(snapshot)


def _count(name: str, value: Any, limit: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidInputError(f"{name} must be a positive integer, got {value!r}")
    if value > limit:
        raise LimitExceededError(f"{name} is {value:,}; the limit is {limit:,}")


def _message_count(messages: Any) -> int:
    return len(messages) if isinstance(messages, (list, tuple)) else 1
