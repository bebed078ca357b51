"""A search's two halves, memories and relations: independent reads, at once on a database server
(wall time = the slower one), in turn on the embedded store (one file, one reader)."""

from __future__ import annotations

import contextvars
from collections.abc import Callable
from concurrent import futures
from concurrent.futures import Executor

from graphmem.types import MemoryItem, Relation

#: seconds a failed search waits for its other half still reading (one statement)
SIBLING_WAIT = 30.0


def read_both(pool: Executor, at_once: bool, find_memories: Callable[[], list[MemoryItem]],
              find_relations: Callable[[], list[Relation]]) -> tuple[list[MemoryItem], list[Relation]]:
    """Both halves; with ``at_once`` the relations on ``pool`` (with the call's context: its trace).
    When the memory half fails, a relation read already running is waited for (its outcome unread)
    before the error is raised: a ``close()`` right after the error must not shut the connection
    under it (the Neo4j driver asserted in its pool's close: a connection written by two threads)."""
    pending = pool.submit(contextvars.copy_context().run, find_relations) if at_once else None
    try:
        memories = find_memories()
    except BaseException:
        if pending is not None and not pending.cancel():
            futures.wait([pending], timeout=SIBLING_WAIT)
        raise
    return memories, (pending.result() if pending is not None else find_relations())
