"""The infer=False half of add_many: lanes of batches, each batch one embedding call and one
transaction (see bulk.py for the semantics).

The reading thread checks items and routes each to the lane of its scope (a stable hash of the
scope key, so a scope always lands in the same lane). A lane is one worker thread that runs its
batches in the order they were routed: the adds of a scope are written in input order. At most
``IN_FLIGHT`` batches wait per lane, so memory stays bounded by the batch size whatever the input.
"""

from __future__ import annotations

import threading
import zlib
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Protocol

from graphmem.errors import GraphMemError, WriteOutcomeUnknown
from graphmem.ingest.bulk_host import BulkHost, BulkItem
from graphmem.ingest.verbatim_add import verbatim_outcome
from graphmem.lifecycle.history import HistoryEvent, sortable_time
from graphmem.retrieval.text import analyse_written

if TYPE_CHECKING:
    from graphmem.ingest.add import AddOutcome

IN_FLIGHT = 2  # batches queued or running per lane before the reader waits


class LaneOwner(Protocol):
    """What the lanes need of the bulk run that owns them (bulk.BulkAdder is one): its settings,
    its memory and its counters. A protocol, so this module does not import bulk.py back."""

    memory: BulkHost
    workers: int
    batch_size: int
    stop: threading.Event

    def fresh(self, items: list[BulkItem]) -> list[BulkItem]: ...

    def report(self) -> None: ...

    def added(self, messages: int, item: BulkItem, add_id: str) -> None: ...

    def skip(self) -> None: ...

    def fail(self, index: int, key: str | None, exc: BaseException | None) -> None: ...


def lane_of(scope_key: str, lanes: int) -> int:
    """The lane of a scope: stable, so every add of the scope goes through the same lane."""
    return zlib.crc32(scope_key.encode()) % lanes


class VerbatimLanes:
    """Routes checked items to lanes and writes each lane's batches; ``close`` waits for them."""

    def __init__(self, adder: LaneOwner) -> None:
        self.adder = adder
        self.lanes = [ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"graphmem-bulk-{i}") for i in range(adder.workers)]
        self.pending: list[list[BulkItem]] = [[] for _ in self.lanes]
        self.running: list[deque[Future[None]]] = [deque() for _ in self.lanes]
        self.aborted = False  # set on the way out of an exception: queued batches return at once

    def route(self, items: list[BulkItem]) -> None:
        for item in items:
            lane = lane_of(item.scope.key, len(self.lanes))
            self.pending[lane].append(item)
            if len(self.pending[lane]) >= self.adder.batch_size:
                self._submit(lane)

    def close(self, flush: bool) -> None:
        """Wait for every lane. ``flush``: the partial batches are written first, and a lane's error
        is raised; without it (an exception is on its way out) batches not started are dropped."""
        self.aborted = not flush
        try:
            if flush and not self.adder.stop.is_set():
                for lane in range(len(self.lanes)):
                    self._submit(lane)
            for queue in self.running if flush else ():
                while queue:
                    queue.popleft().result()
        finally:
            for pool in self.lanes:  # a running batch always finishes: its adds are whole either way
                pool.shutdown(wait=True, cancel_futures=True)

    def _submit(self, lane: int) -> None:
        batch, self.pending[lane] = self.pending[lane], []
        if not batch:
            return
        queue = self.running[lane]
        while len(queue) >= IN_FLIGHT:  # back-pressure: the reader waits for the lane
            queue.popleft().result()
        queue.append(self.lanes[lane].submit(self._write, batch))

    def _write(self, batch: list[BulkItem]) -> None:
        if self.adder.stop.is_set() or self.aborted:
            return
        write_batch(self.adder, self.adder.fresh(batch))
        self.adder.report()


def write_batch(adder: LaneOwner, items: list[BulkItem]) -> None:
    """One embedding call and one transaction for the batch; if it fails, one add at a time."""
    memory = adder.memory
    items = [i for i in items if i.parsed or i.key is not None]
    if not items:
        return
    texts = [m.content for i in items for m in i.parsed]
    vectors = iter(memory.embedder.embed(texts) if texts else [])
    outcomes = [
        verbatim_outcome(memory, i.scope, i.parsed, [next(vectors) for _ in i.parsed], i.metadata, i.reference_time,
                         i.expiration_date, i.key)
        for i in items
    ]  # fmt: skip
    try:
        commit_many(adder, outcomes)
    except GraphMemError as batch_error:
        if len(items) == 1:
            _failed(adder, items[0], batch_error)
            return
        for item, outcome in zip(items, outcomes, strict=True):  # find the bad add; the others still go in
            try:
                commit_many(adder, [outcome])
            except GraphMemError as exc:
                _failed(adder, item, exc)
            else:
                adder.added(len(item.parsed), item, outcome.add_id)
        return
    for item, outcome in zip(items, outcomes, strict=True):
        adder.added(len(item.parsed), item, outcome.add_id)
    memory._retention.maybe_purge()


def _failed(adder: LaneOwner, item: BulkItem, exc: GraphMemError) -> None:
    """A failed add, or a skipped one when its key turns out imported (another lane or importer was first)."""
    try:
        imported = item.key is not None and item.key in adder.memory.store.imported_keys([item.key])
    except GraphMemError:
        imported = False
    if imported:
        adder.skip()
    else:
        adder.fail(item.index, item.key, exc)


def commit_many(adder: LaneOwner, outcomes: list[AddOutcome]) -> None:
    """Memory._commit for a batch: history rows staged before, committed after the one transaction."""
    memory = adder.memory
    writes, staged = [], []
    for o in outcomes:
        write = o.write
        if write is None or write.is_empty():
            continue
        if write.messages and memory.config.context.max_messages == 0:
            write.messages = []
        writes.append(write)
        events = [HistoryEvent(m.id, m.event, None, m.text, m.role, expires_at=sortable_time(m.expires_at)) for m in write.memories]
        if events:
            staged.append((write.add_id, write.scope, events))
    add_ids = [a for a, _, _ in staged]
    memory.history_log.stage_many(staged)
    try:
        memory.store.write_many(writes)
    except WriteOutcomeUnknown:  # settled against the store later (history.py); a rerun skips imported keys
        for add_id in add_ids:
            memory.history_log.set_aside(add_id)
        raise
    except BaseException:
        memory.history_log.discard_many(add_ids)
        raise
    memory.history_log.commit_many(add_ids)
    analyse_written(writes)
