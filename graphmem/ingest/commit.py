"""Committing a change to memories with its audit rows (lifecycle/history.py): rows staged first (a
locked log fails here, before anything is written), the store write, then the rows committed.

The outcome of the store write is one of three, and each is answered for what it is:
- written: the rows are committed (that never raises: the store is the record);
- not written: the rows are dropped and the store's error is raised;
- unknown (WriteOutcomeUnknown: the connection died, or the database stopped, after COMMIT was
  sent): the change is read back at once by its memory ids; when the store shows all of it, its
  rows are committed now. Otherwise (the store is away, or does not show it yet) the rows are set
  aside, to be settled against the store on the next history read, keyed retry or start. Either
  way the caller gets WriteOutcomeUnknown (the documented answer) naming the add id, the
  idempotency key and the memory ids to check, and saying what the read-back found.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from graphmem.errors import WriteOutcomeUnknown
from graphmem.ingest.add import AddOutcome
from graphmem.ingest.idempotency import Seal
from graphmem.lifecycle.history import History, HistoryEvent, sortable_time
from graphmem.retrieval.text import analyse_written
from graphmem.stores.base import GraphStore
from graphmem.types import MemoryItem, Scope, new_id

#: how a change is read back: the store's get_memory
Lookup = Callable[[str], MemoryItem | None]


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
    with audited(history, write.add_id, write.scope, events, key, store.get_memory):
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
def audited(history: History, change_id: str, scope: Scope, events: list[HistoryEvent], key: str | None = None,
            lookup: Lookup | None = None) -> Iterator[None]:
    """The block's store change between staging and committing its history rows (see the module).
    ``lookup`` (the store's get_memory): an unknown outcome is read back at once, and a change the
    store shows whole is answered as written."""
    if events:
        history.stage(change_id, scope, events)
    try:
        yield
    except WriteOutcomeUnknown as exc:
        found = False
        if events:
            history.set_aside(change_id)
            found = lookup is not None and history.resolve(change_id, lookup)
        raise unknown(exc, change_id, key, tuple(dict.fromkeys(e.memory_id for e in events)), found) from exc
    except BaseException:
        if events:
            history.discard(change_id)
        raise
    if events:
        history.commit(change_id)


def unknown(exc: WriteOutcomeUnknown, change_id: str, key: str | None, memory_ids: tuple[str, ...],
            found: bool = False) -> WriteOutcomeUnknown:
    """The store's WriteOutcomeUnknown, saying which write it was and how to find out; ``found``:
    read back at once, the store showed it (its history rows are recorded)."""
    if found:
        retry = f": a retry with the same idempotency_key {key!r} returns its result" if key is not None else ""
        return WriteOutcomeUnknown(f"{exc}; read back at once, write {change_id} is in the store and its history is "
                                   f"recorded{retry}", add_id=change_id, idempotency_key=key, memory_ids=memory_ids)
    how = (f"retry with the same idempotency_key {key!r}: it returns this add's result if it was written, and writes it "
           "once if not" if key is not None else
           "retrying without an idempotency key may store it twice; check with get() or history()")
    ids = f" (memory ids: {', '.join(memory_ids)})" if memory_ids else ""
    return WriteOutcomeUnknown(f"{exc}; whether write {change_id}{ids} happened is unknown: {how}",
                               add_id=change_id, idempotency_key=key, memory_ids=memory_ids)
