"""Update and delete of one memory by id (``Memory.update`` / ``Memory.delete``): one winner per race.

Both are conditional writes made under the memory's scope lock (the lock adds of the scope hold,
``GraphStore.scope_lock``; on Neo4j a database lock, so processes queue too): the memory is read
again inside the lock, and the change is written only if it is still there, live. So of N
concurrent deletes exactly one removes it and writes a DELETE row; the others answer NotFoundError
and write nothing; an update that comes after a delete answers NotFoundError and writes nothing; an
add's decision about a memory never meets a half-done delete. The store's own statement is
conditional as well (delete_memory.cypher: only a live memory), for writers that do not lock.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphmem.embeddings import Embedder
from graphmem.errors import NotFoundError
from graphmem.ingest import checks
from graphmem.ingest.add import AddOutcome
from graphmem.ingest.commit import audited
from graphmem.lifecycle.history import History, HistoryEvent
from graphmem.retrieval.when import annotate_times
from graphmem.stores.base import GraphStore
from graphmem.types import GraphWrite, MemoryItem, MemoryWrite, Owners, Scope, new_id, utcnow

Result = dict[str, Any]
Lookup = Callable[[str], MemoryItem | None]


def live(store: GraphStore, memory_id: str, owners: Owners | None = None) -> MemoryItem | None:
    """The live memory, or None: unknown, soft-deleted, expired, another user's (``owners``), or read
    half-removed (a node being deleted can be read without its scope ids: that is gone, not a
    caller's missing scope)."""
    item = store.get_memory(memory_id, owners)
    if item is None or item.deleted_at is not None or not (item.user_id or item.agent_id or item.run_id):
        return None
    return item


def scope_of(item: MemoryItem) -> Scope:
    return Scope.of(item.user_id, item.agent_id, item.run_id)


def delete(store: GraphStore, history: History, item: MemoryItem) -> Result:
    """Remove ``item`` (found before, outside the lock) if it is still there once the lock is held."""
    scope = scope_of(item)
    with store.scope_lock(scope):
        current = live(store, item.id)
        if current is None:
            raise NotFoundError(f"no memory with id {item.id!r}")
        with audited(history, new_id(), scope, [HistoryEvent(current.id, "DELETE", current.text, None, current.role)],
                     lookup=store.get_memory):
            if not store.delete_memory(current.id):  # removed by a writer that does not lock: nothing written here
                raise NotFoundError(f"no memory with id {item.id!r}")
    return {"message": "Memory deleted successfully!", "id": item.id}


def update(store: GraphStore, embedder: Embedder, commit: Callable[[AddOutcome], None], item: MemoryItem, text: str,
           metadata: dict[str, Any] | None) -> Result:
    """Replace ``item``'s text (and merge ``metadata``) if it is still live once the lock is held."""
    scope = scope_of(item)
    checked = None if metadata is None else checks.checked_metadata(metadata)
    with store.scope_lock(scope):
        current = live(store, item.id)
        if current is None:
            raise NotFoundError(f"no memory with id {item.id!r}")
        merged = None if checked is None else checks.checked_metadata({**current.metadata, **checked})  # within the limits
        if text == current.text and merged in (None, current.metadata):  # nothing changes: no write, no history row
            return {"message": "Memory unchanged", "id": current.id, "memory": text}
        outcome = AddOutcome(add_id=new_id(), previous={current.id: current.text})
        outcome.write = GraphWrite(add_id=outcome.add_id, scope=scope, at=utcnow())
        outcome.write.memories = [MemoryWrite("UPDATE", current.id, text, embedder.embed_one(text), merged, role=current.role)]
        annotate_times(outcome.write.memories, current.said_at or current.created_at)
        commit(outcome)
    return {"message": "Memory updated successfully!", "id": current.id, "memory": text}
