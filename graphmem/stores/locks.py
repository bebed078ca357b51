"""Per-scope write locks: adds to one scope run one at a time, adds to different scopes in parallel.

An add reads the scope (similar memories, current relations), asks the LLM what to change, then
writes. Two adds of one scope interleaving there would each miss the other's facts, so the whole
read-decide-write of an add holds its scope's lock (``GraphStore.scope_lock``). This module is the
in-process part; the Neo4j store adds a database lock on top so processes serialise too.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager


class ScopeLocks:
    """One lock per scope key, created on demand and dropped when nobody holds or waits for it."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, tuple[threading.Lock, int]] = {}

    @contextmanager
    def hold(self, key: str) -> Iterator[None]:
        with self._guard:
            lock, users = self._locks.get(key, (None, 0))
            lock = lock or threading.Lock()
            self._locks[key] = (lock, users + 1)
        try:
            with lock:
                yield
        finally:
            with self._guard:
                _, users = self._locks[key]
                if users <= 1:
                    del self._locks[key]
                else:
                    self._locks[key] = (lock, users - 1)

    def __len__(self) -> int:
        """Scopes currently held or waited for."""
        with self._guard:
            return len(self._locks)


_CREATE = threading.Lock()


def locks_of(owner: object) -> ScopeLocks:
    """The ScopeLocks of ``owner`` (a store), created on first use."""
    found = getattr(owner, "_scope_locks", None)
    if found is None:
        with _CREATE:
            found = getattr(owner, "_scope_locks", None)
            if found is None:
                found = ScopeLocks()
                owner._scope_locks = found  # type: ignore[attr-defined]  # cached on any owner object, declared by none
    return found
