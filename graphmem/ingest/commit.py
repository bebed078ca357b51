"""Committing a change to memories with its audit rows (lifecycle/history.py): rows staged first (a
locked log fails here, before anything is written), the store write, then the rows committed.

The outcome of the store write is one of three, and each is answered for what it is:
- written: the rows are committed (that never raises: the store is the record);
- not written: the rows are dropped and the store's error is raised;
- unknown (WriteOutcomeUnknown: the connection died after COMMIT was sent): the rows are set aside,
  to be settled against the store on the next history read, keyed retry or start, and the caller
  gets WriteOutcomeUnknown naming the add id, the idempotency key and the memory ids to check.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from graphmem.errors import WriteOutcomeUnknown
from graphmem.ingest.add import AddOutcome
from graphmem.ingest.idempotency import Seal
from graphmem.lifecycle.history import History, HistoryEvent, sortable_time
from graphmem.retrieval.text import analyse_written
from graphmem.stores.base import GraphStore
from graphmem.types import Scope, new_id


def commit_add(store: GraphStore, history: History, outcome: AddOutcome, keep_messages: int, key: str | None = None) -> None:
    """Write the add with its history rows; ``key``: the caller's idempotency key, for messages."""
    write = outcome.write
    if write is None or write.is_empty():
        return
    events = [
        HistoryEvent(m.id, m.event, outcome.previous.get(m.id), None if m.event == "DELETE" else m.text, m.role,
                     expires_at=sortable_time(m.expires_at))
        for m in write.memories
    ]
    if write.messages and keep_messages == 0:
        write.messages = []
    with audited(history, write.add_id, write.scope, events, key):
        store.write(write)
    analyse_written([write])


def nothing_added(store: GraphStore, history: History, scope: Scope, seal: Seal | None) -> dict[str, Any]:
    """The answer of an add with no message to read: an id all the same, and for a keyed add that
    answer committed, so a retry answers the same id (``provenance`` of it is NotFoundError: the add
    recorded nothing)."""
    outcome = AddOutcome(add_id=new_id())
    result: dict[str, Any] = {"add_id": outcome.add_id, "results": [], "relations": []}
    if seal is not None:
        outcome.write = seal.apply(None, scope, result)
        commit_add(store, history, outcome, 0, seal.key)
    return result


@contextmanager
def audited(history: History, change_id: str, scope: Scope, events: list[HistoryEvent], key: str | None = None) -> Iterator[None]:
    """The block's store change between staging and committing its history rows (see the module)."""
    if events:
        history.stage(change_id, scope, events)
    try:
        yield
    except WriteOutcomeUnknown as exc:
        if events:
            history.set_aside(change_id)
        raise unknown(exc, change_id, key, tuple(dict.fromkeys(e.memory_id for e in events))) from exc
    except BaseException:
        if events:
            history.discard(change_id)
        raise
    if events:
        history.commit(change_id)


def unknown(exc: WriteOutcomeUnknown, change_id: str, key: str | None, memory_ids: tuple[str, ...]) -> WriteOutcomeUnknown:
    """The store's WriteOutcomeUnknown, saying which write it was and how to find out."""
    how = (f"retry with the same idempotency_key {key!r}: it returns this add's result if it was written, and writes it "
           "once if not" if key is not None else
           "retrying without an idempotency key may store it twice; check with get() or history()")
    ids = f" (memory ids: {', '.join(memory_ids)})" if memory_ids else ""
    return WriteOutcomeUnknown(f"{exc}; whether write {change_id}{ids} happened is unknown: {how}",
                               add_id=change_id, idempotency_key=key, memory_ids=memory_ids)
