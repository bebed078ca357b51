"""Room kept on the disk so that a full disk can still be emptied through the API.

Every change writes a little before it frees anything (a history row, a journal line), so on a disk
that is full to the last byte even a delete would fail. graphmem keeps a small reserve file beside
the history database (``<history_db_path>.reserve``, RESERVE_BYTES). When an operation that frees
space (delete, delete_all, forget, forget_entity, purge_expired) fails with StorageFullError, the
reserve is given up and the operation runs once more in the room it leaves; the reserve is taken
again, when there is room for it, after the next operation that freed space and at the next start.
Adds never use it: on a full disk they keep failing with StorageFullError, and nothing is written.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from graphmem.errors import StorageFullError

log = logging.getLogger(__name__)

RESERVE_BYTES = 1 << 20  # 1 MiB: a history checkpoint and a few journal lines

_T = TypeVar("_T")


class Reserve:
    def __init__(self, path: Path | None, size: int = RESERVE_BYTES) -> None:
        self.path = path
        self.size = size
        self.take()

    @classmethod
    def beside(cls, history_path: Path | str) -> Reserve:
        """The reserve of a history database (none for an in-memory one)."""
        if str(history_path) == ":memory:":
            return cls(None)
        path = Path(history_path).expanduser()
        return cls(path.with_name(path.name + ".reserve"))

    def take(self) -> bool:
        """Make sure the reserve exists (best effort: on a disk without room, it does not)."""
        if self.path is None:
            return False
        try:
            if self.path.exists() and self.path.stat().st_size >= self.size:
                return True
            with open(self.path, "wb") as f:
                f.write(b"\0" * self.size)  # real blocks: a sparse file would reserve nothing
                f.flush()
                os.fsync(f.fileno())
            return True
        except OSError:
            self.path.unlink(missing_ok=True)
            return False

    def release(self) -> bool:
        """Give the reserve's room back to the disk; False when there was none to give."""
        if self.path is None or not self.path.exists():
            return False
        try:
            self.path.unlink()
        except OSError:
            return False
        log.warning("the disk is full: released graphmem's reserve (%s) to finish an operation that frees space", self.path)
        return True

    def freeing(self, operation: Callable[[], _T]) -> _T:
        """Run an operation that frees space: on a full disk, once more after releasing the reserve."""
        try:
            result = operation()
        except StorageFullError:
            if not self.release():
                raise
            result = operation()
        self.take()
        return result
