"""The operating system under the launcher: file locks, pids, ports and logs, each failure a
LauncherError naming the step."""

from __future__ import annotations

import contextlib
import os
import re
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from graphmem.errors import LauncherError
from graphmem.launcher.project import JAR_NAME


@contextlib.contextmanager
def os_errors(action: str) -> Iterator[None]:
    """Files, processes and sockets fail with OSError; callers see a LauncherError naming the step."""
    try:
        yield
    except OSError as exc:
        raise LauncherError(f"cannot {action} Neo4j: {exc}") from exc


@contextlib.contextmanager
def file_lock(path: Path, timeout: float) -> Iterator[None]:
    """Exclusive inter-process lock (flock), so concurrent starts/builds (parallel test runs,
    pytest-xdist workers) do not race: the second caller waits, then finds Neo4j running."""
    try:
        import fcntl
    except ImportError:  # Windows: no locking
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LauncherError(f"timed out after {timeout}s waiting for lock {path}") from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\[[0-9;]*m")


def log_tail(path: Path, lines: int = 30) -> list[str]:
    """The last ``lines`` lines of a log, without terminal colour codes (Maven leaves some even when told not to)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [_ANSI.sub("", line).rstrip() for line in text.splitlines()[-lines:]]


def port_open(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def pid_alive(pid: int) -> bool:
    try:
        # Reap it if it is our own exited child, so it does not linger as a zombie.
        if os.name != "nt" and os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    status = Path(f"/proc/{pid}/status")
    if status.exists():
        try:
            if re.search(r"^State:\s+Z", status.read_text(), re.MULTILINE):
                return False
        except OSError:
            pass
    return True


def is_our_java(pid: int) -> bool:
    """Guard against pid reuse: on Linux check the command line names our jar."""
    cmdline = Path(f"/proc/{pid}/cmdline")
    if not cmdline.exists():
        return True  # no /proc (macOS): trust the pid file
    try:
        return JAR_NAME.encode() in cmdline.read_bytes()
    except OSError:
        return False
