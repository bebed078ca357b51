"""Which History a history row in flight belongs to, and whether that History's process still lives.

Several processes may share one history database (the default ``~/.graphmem/history.db`` is shared
by every process that does not set ``history_db_path``). An add's rows are staged before its store
write; another process starting meanwhile must not take them for a crash's leftovers. So each open
History has an owner token, written into its staged and set-aside rows, and holds an exclusive
``flock`` on ``<db>.owners/<token>.lock`` for as long as it is open. The kernel releases the lock
when the process ends, however it ends (kill -9, a power cut of the process, an OOM kill), so a
lock that can be taken, or a lock file that is gone, means a dead owner; a lock that cannot be taken
means a live one. ``flock`` locks belong to the open file, not the process, so two Histories in one
process see each other as alive too.

Where ``fcntl`` is missing (not POSIX), no lock is held and every other owner counts as dead: the
repair at start then treats every row in flight as a crash's leftover, as graphmem did before owners.

A lock file is created, locked, then checked to still be the file at its path: a sweeper that found
it unlocked in the instant between creation and lock may have removed it, and a lock on a removed
file would show the owner as dead. A forked child closes its copy of the parent's lock file (the
lock stays with the parent, and dies with it) and takes a lock of its own under a new token.
"""

from __future__ import annotations

import logging
import os
import re
import time
import weakref
from pathlib import Path

from graphmem.types import new_id

try:
    from fcntl import LOCK_EX, LOCK_NB, flock

    LOCKS = True
except ImportError:  # pragma: no cover - not POSIX: no liveness, see the module
    LOCKS = False

log = logging.getLogger(__name__)

#: Attempts to create and lock this owner's file (each waits 10 ms): only a sweeper probing the new
#: file at that instant makes an attempt fail.
_TAKE_TRIES = 50
#: Lock files of dead owners removed by one start at most (the rest by the next starts).
SWEEP_LIMIT = 1000
#: What a token looks like (new_id: a uuid4); anything else read from a row never becomes a path.
_TOKEN = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")

_held: weakref.WeakSet[OwnerLock] = weakref.WeakSet()
_fork_hook = False


class OwnerLock:
    """This History's owner token and the lock it holds while open (none for ``:memory:``)."""

    def __init__(self, db_path: Path | str) -> None:
        self.token = new_id()
        self.folder = db_path.with_name(db_path.name + ".owners") if isinstance(db_path, Path) else None
        self._fd: int | None = None
        self._closing: weakref.finalize[[int], OwnerLock] | None = None
        if self.folder is not None and LOCKS:
            self.folder.mkdir(exist_ok=True)
            self._hold(self._take())
            _watch_forks(self)

    def _hold(self, fd: int) -> None:
        self._fd = fd
        # a History dropped without close: its lock goes with it, not with the process (its file is swept)
        self._closing = weakref.finalize(self, os.close, fd)

    def _path(self, token: str) -> Path:
        assert self.folder is not None
        return self.folder / f"{token}.lock"

    def _take(self) -> int:
        """Create and lock this owner's file; OSError when it cannot be done."""
        path = self._path(self.token)
        for _ in range(_TAKE_TRIES):
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
            try:
                flock(fd, LOCK_EX | LOCK_NB)
                if os.path.samestat(os.fstat(fd), os.stat(path)):
                    return fd
            except (BlockingIOError, FileNotFoundError):  # a sweeper's probe of the new file: again
                pass
            os.close(fd)
            time.sleep(0.01)
        raise OSError(f"the owner lock {path} could not be taken")

    @property
    def holds(self) -> bool:
        return self._fd is not None

    def alive(self, token: str | None) -> bool:
        """Whether ``token``'s History is open: this one's own token always is; a row without an
        owner (written before owners were kept) or an owner whose lock can be taken is not."""
        if token == self.token:
            return True
        return self._probe(token, reap=False)

    def reap(self, token: str) -> bool:
        """Remove a dead owner's lock file (its rows are resolved); False when it is alive."""
        return token != self.token and not self._probe(token, reap=True)

    def _probe(self, token: str | None, reap: bool) -> bool:
        """True when ``token``'s lock is held by an open History (an unreadable file: assumed held)."""
        if token is None or not LOCKS or self.folder is None or not _TOKEN.fullmatch(token):
            return False
        path = self._path(token)
        try:
            fd = os.open(path, os.O_RDWR)
        except FileNotFoundError:
            return False
        except OSError as exc:  # another user's file, say: its rows are left to its owner
            log.info("cannot tell whether history owner %s is alive (%s): its rows are left to it", token, exc)
            return True
        try:
            flock(fd, LOCK_EX | LOCK_NB)
        except BlockingIOError:
            return True
        except OSError as exc:
            log.info("cannot tell whether history owner %s is alive (%s): its rows are left to it", token, exc)
            return True
        else:
            if reap:  # removed while locked: a prober that opened it before finds it unlocked, as it is
                path.unlink(missing_ok=True)
            return False
        finally:
            os.close(fd)

    def sweep(self, in_flight: set[str]) -> int:
        """Remove the lock files of dead owners that have no row in flight; returns how many."""
        if not LOCKS or self.folder is None:
            return 0
        removed = 0
        with os.scandir(self.folder) as entries:
            for entry in entries:
                token = entry.name.removesuffix(".lock")
                if removed >= SWEEP_LIMIT:
                    break
                if entry.name.endswith(".lock") and _TOKEN.fullmatch(token) and token not in in_flight and self.reap(token):
                    removed += 1
        return removed

    def release(self) -> None:
        """Give the lock up (the History closes): its file goes, so its rows count as a dead owner's."""
        fd, self._fd = self._fd, None
        if fd is None:
            return
        _held.discard(self)
        if self._closing is not None:
            self._closing.detach()
        try:
            self._path(self.token).unlink(missing_ok=True)
        except OSError as exc:  # left for a later start's sweep: unlocked, it reads as dead all the same
            log.info("owner lock file of history %s stays for a later sweep: %s", self.token, exc)
        os.close(fd)

    def _after_fork(self) -> None:
        """In a forked child: let the parent's lock go with the parent, and own a new token."""
        if self._fd is None:
            return
        if self._closing is not None:
            self._closing.detach()
        os.close(self._fd)  # not LOCK_UN: that would release the parent's lock as well
        self._fd = None
        self.token = new_id()
        try:
            self._hold(self._take())
        except OSError as exc:
            log.warning("history in a forked process holds no owner lock (its rows count as a dead owner's): %s", exc)


def _watch_forks(lock: OwnerLock) -> None:
    global _fork_hook
    _held.add(lock)
    if not _fork_hook and hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=_after_fork_in_child)
        _fork_hook = True


def _after_fork_in_child() -> None:
    for lock in list(_held):
        lock._after_fork()
