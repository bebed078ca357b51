"""One memory by id, for every door (REST, the inspector, MCP): whose it may be is decided by the
store's lookup itself (graphmem.types.Owners: a key's users, or a server's scope), before any of
the memory is loaded, so another tenant's id answers exactly as an unknown id does, in its body and
in its time. Each door builds its Owners and calls these; none reads a memory first and judges it
after (which told another tenant's ids apart by how long the answer took)."""

from __future__ import annotations

from typing import Any

from graphmem.aio import AsyncMemory
from graphmem.errors import NotFoundError
from graphmem.results import MemoryResult
from graphmem.types import Owners


async def memory(engine: AsyncMemory, memory_id: str, owners: Owners | None) -> MemoryResult:
    """The memory, if ``owners`` (None: anyone's) may see it; else NotFoundError, as for an unknown id."""
    found = await engine.get(memory_id, owners=owners)
    if found is None or (owners is not None and not owners.admits(found)):  # the store decided; this only restates it
        raise NotFoundError(f"no memory with id {memory_id!r}")
    return found


async def history(engine: AsyncMemory, memory_id: str, owners: Owners | None) -> list[dict[str, Any]]:
    """The memory's history, if ``owners`` may see it (the history log's query keeps only their rows);
    else NotFoundError, as for an unknown id. A deleted memory keeps its history."""
    events = await engine.history(memory_id, owners=owners)
    if not events or (owners is not None and not all(owners.admits(e) for e in events)):
        raise NotFoundError(f"no history for memory {memory_id!r}")
    return events
