"""Why a relation is believed: what one add brought (``Memory.provenance``).

Every relation version names the add that created it (``provenance["added_by"]``) and the one that
retired it (``provenance["retired_by"]``); every memory event and every logged message carries its
add's id too. ``explain`` resolves an add id, inside one scope, to:

- ``messages``: the add's messages as the scope's conversation log still holds them (the log keeps
  the newest ``context.max_messages`` per scope, so an old add's messages may be gone:
  ``messages_kept`` says whether any are);
- ``memories``: the memory events the add wrote (ADD / UPDATE / DELETE with the old and new text,
  as ``Memory.history`` shows them);
- ``relations``: ``asserted``, the versions it wrote or said again (their ``added_by`` holds it:
  the first of those ids created the version); ``retired``, the versions it ended.

Reads through the scope as every read does (the conversation log and memory history of the scope's
partition, ``Scope.key``; the relation versions the store lists for the scope). An add that left
nothing in the scope (an id nobody wrote, another user's add, an add that recorded nothing) is one
NotFoundError with one message: the answer never tells the caller an id exists elsewhere, and
the reads are the same whichever it is.
"""

from __future__ import annotations

from typing import Any

from graphmem.errors import NotFoundError
from graphmem.lifecycle.history import History
from graphmem.stores.base import GraphStore
from graphmem.types import Scope, iso


def explain(store: GraphStore, history: History, scope: Scope, add_id: str, log_size: int) -> dict[str, Any]:
    """What the add ``add_id`` brought to ``scope`` (see the module's description)."""
    log = store.conversation(scope, log_size) if log_size > 0 else None
    said = [m for m in (log.messages if log else []) if m.add_id == add_id]
    versions = store.get_all(scope, include_invalidated=True)
    asserted = [r for r in versions if add_id in r.provenance]
    retired = [r for r in versions if r.retired_by == add_id]
    memories = history.of_add(scope, add_id)
    if not (said or memories or asserted or retired):
        raise NotFoundError(f"no add with id {add_id!r} in this scope")
    return {
        "add_id": add_id,
        "messages": [{"role": m.role, "content": m.content, "timestamp": iso(m.timestamp), "seq": m.seq} for m in said],
        "messages_kept": bool(said),
        "memories": memories,
        "relations": {"asserted": [r.to_dict() for r in asserted], "retired": [r.to_dict() for r in retired]},
    }
