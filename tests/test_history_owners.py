"""Processes sharing one history database (issue 45): a start repairs only its own rows and those of
owners no longer alive; another live process's add in flight keeps its rows, and its commit finds
them when its store write lands. The other process is a real one (a child Python running a real
Memory on an embedded store of its own), stopped between its staged rows and its store write by a
gate around ``store.write``; it is killed with SIGKILL where a crash is meant. Real SQLite, real stores."""

from __future__ import annotations

import json
import os
import selectors
import signal
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from conftest import TEST_DIMS
from helpers import llm_config, make_memory

from graphmem import Memory
from graphmem.lifecycle.history import History, HistoryEvent
from graphmem.types import Scope

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="owner liveness is an flock (POSIX)")

#: The other process: a Memory whose store write waits for the test's word. Commands are JSON lines
#: on stdin; each answers one JSON line on stdout.
_CHILD = textwrap.dedent(
    """
    import json, sys
    from graphmem import Memory
    from graphmem.errors import WriteOutcomeUnknown

    memory = Memory(json.loads(sys.argv[1]))
    real_write = memory.store.write
    late = []

    def say(**answer):
        print(json.dumps(answer), flush=True)

    def gated(write):
        say(in_flight=write.add_id, token=getattr(memory.history_log, "_owner", None) and memory.history_log._owner.token)  # rows staged, no store write yet
        word = json.loads(sys.stdin.readline())["do"]
        if word == "unknown":  # the write's outcome is lost: it lands later (see "land")
            late.append(write)
            raise WriteOutcomeUnknown("connection lost during COMMIT")
        real_write(write)
        if word == "write-and-hang":  # the write landed; the process dies before its history commit
            say(written=write.add_id)
            sys.stdin.readline()

    memory.store.write = gated
    for line in sys.stdin:
        command = json.loads(line)
        if command["do"] == "add":
            try:
                say(added=memory.add(command["text"], user_id=command["user"], infer=False))
            except WriteOutcomeUnknown as exc:
                say(unknown=exc.add_id, memory_ids=list(exc.memory_ids))
        elif command["do"] == "land":
            real_write(late.pop())
            say(landed=True)
        elif command["do"] == "history":
            say(history=memory.history(command["memory_id"]))
    memory.close()
    """
)


class Other:
    """The other process, on the shared history database and an embedded store of its own."""

    def __init__(self, tmp_path: Path, server: Any, history: Path, name: str = "other") -> None:
        self.store_path = tmp_path / f"{name}-graph"
        config = {"llm": llm_config(server), "embedder": {"provider": "hashing", "config": {"dims": TEST_DIMS}},
                  "graph_store": {"provider": "embedded", "config": {"path": str(self.store_path)}},
                  "history_db_path": str(history), "warm_up": False}
        self.config = config
        self.errors = open(tmp_path / f"{name}.stderr", "w+b")  # noqa: SIM115 - read on failure, closed in close()
        self.proc = subprocess.Popen([sys.executable, "-c", _CHILD, json.dumps(config)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=self.errors, text=True)
        self._answers = selectors.DefaultSelector()
        assert self.proc.stdout is not None
        self._answers.register(self.proc.stdout, selectors.EVENT_READ)

    def send(self, **command: Any) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(command) + "\n")
        self.proc.stdin.flush()

    def answer(self) -> dict[str, Any]:
        """The next answer (a guard of 60 s against a hung child, not a timing of anything)."""
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline() if self._answers.select(60) else ""
        if not line:
            self.errors.seek(0)
            raise AssertionError(f"the other process did not answer: {self.errors.read().decode(errors='replace')[-3000:]}")
        return dict(json.loads(line))

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)  # no shutdown, no close: the kernel drops its flock
        self.proc.wait(30)

    def close(self) -> None:
        if self.proc.poll() is None:
            assert self.proc.stdin is not None
            self.proc.stdin.close()  # the child closes its Memory at end of input
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.kill()
        self._answers.close()
        self.errors.close()


def _rows(path: Path, add_id: str) -> list[tuple[int, str | None]]:
    """An add's rows: (committed: 0 staged, 1 done, 2 set aside; new_memory), oldest first."""
    with sqlite3.connect(path) as db:
        return db.execute("SELECT committed, new_memory FROM history WHERE add_id = ? ORDER BY seq", (add_id,)).fetchall()


def _owners(path: Path, add_id: str) -> set[str | None]:
    with sqlite3.connect(path) as db:
        return {owner for (owner,) in db.execute("SELECT owner FROM history WHERE add_id = ?", (add_id,))}


def _lock_files(path: Path) -> set[str]:
    folder = path.with_name(path.name + ".owners")
    return {p.name.removesuffix(".lock") for p in folder.glob("*.lock")}


def test_a_start_leaves_another_live_process_s_add_in_flight_and_its_commit_finds_its_rows(server, store, tmp_path, uid):
    history = tmp_path / "history.db"
    other = Other(tmp_path, server, history)
    try:
        other.send(do="add", text="Likes green tea", user=uid)
        flight = other.answer()  # staged, the store write held at the gate
        add_id, token = flight["in_flight"], flight["token"]
        assert _rows(history, add_id) == [(0, "Likes green tea")]
        with make_memory(server, store, TEST_DIMS, history_db_path=str(history)) as memory:  # its start repairs
            assert _rows(history, add_id) == [(0, "Likes green tea")]  # another process's add in flight: left
            assert _owners(history, add_id) == {token} and token in _lock_files(history)
            other.send(do="write")
            (item,) = other.answer()["added"]["results"]
            other.send(do="history", memory_id=item["id"])
            seen = other.answer()["history"]
            assert [(r["event"], r["new_memory"], r["add_id"]) for r in seen] == [("ADD", "Likes green tea", add_id)]
            # the row reads alike from the process that started meanwhile (a read settles nothing of it)
            assert [r["add_id"] for r in memory.history(item["id"])] == [add_id]
    finally:
        other.close()
    assert _lock_files(history) == set()  # both closed: no lock file stays


def test_kill_9_after_the_store_write_then_a_start_on_its_store_commits_its_rows(server, tmp_path, uid):
    history = tmp_path / "history.db"
    other = Other(tmp_path, server, history)
    idle = Other(tmp_path, server, history, name="idle")  # a process with nothing in flight, killed too
    try:
        other.send(do="add", text="Plays the cello", user=uid)
        add_id = other.answer()["in_flight"]
        bystander = Memory({"llm": llm_config(server), "embedder": {"provider": "hashing", "config": {"dims": TEST_DIMS}},
                            "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "bystander")}},
                            "history_db_path": str(history), "warm_up": False})
        bystander.close()  # a start with another store while the add was in flight: nothing of it judged there
        assert [state for state, *_ in _rows(history, add_id)] == [0]
        other.send(do="write-and-hang")
        assert other.answer()["written"] == add_id
        idle.send(do="history", memory_id="none")
        idle.answer()
        owners = _lock_files(history)
        assert len(owners) == 2
        other.kill()
        idle.kill()
        assert _lock_files(history) == owners  # a SIGKILL leaves the files; their locks went with the processes
        with Memory(other.config | {"llm": llm_config(server)}) as restarted:  # the dead owner's store, a new process
            (item,) = restarted.get_all(user_id=uid)["results"]
            assert [(r["new_memory"], r["add_id"]) for r in restarted.history(item["id"])] == [("Plays the cello", add_id)]
            assert _lock_files(history) == {restarted.history_log._owner.token}  # dead owners' files swept
    finally:
        other.close()
        idle.close()


def test_a_read_leaves_another_live_process_s_unknown_write_until_it_lands_or_its_owner_dies(server, store, tmp_path, uid):
    history = tmp_path / "history.db"
    other = Other(tmp_path, server, history)
    try:
        other.send(do="add", text="Speaks Welsh", user=uid)
        add_id = other.answer()["in_flight"]
        other.send(do="unknown")
        (memory_id,) = other.answer()["memory_ids"]
        assert [state for state, *_ in _rows(history, add_id)] == [2]  # set aside: the read-back did not show it
        with make_memory(server, store, TEST_DIMS, history_db_path=str(history)) as memory:
            assert memory.history(memory_id) == []  # settles: the store here does not show it, its owner lives
            assert [state for state, *_ in _rows(history, add_id)] == [2]
            other.send(do="land")  # the write lands after all
            other.answer()
            other.send(do="history", memory_id=memory_id)
            assert [r["add_id"] for r in other.answer()["history"]] == [add_id]  # its owner's read settles it
    finally:
        other.close()


def test_a_dead_owner_s_set_aside_rows_are_settled_by_a_read(server, store, tmp_path, uid):
    history = tmp_path / "history.db"
    with make_memory(server, store, TEST_DIMS, history_db_path=str(history)) as memory:
        (item,) = memory.add("Runs marathons", user_id=uid, infer=False)["results"]
        owner = History(history)  # another History in this process: its flock is its own open file
        scope = Scope.of(user_id=uid)
        owner.stage("late", scope, [HistoryEvent(item["id"], "UPDATE", "Runs marathons", "Runs ultras"),
                                    HistoryEvent("shown", "DELETE", "gone", None)])
        owner.set_aside("late")
        owner.stage("flight", scope, [HistoryEvent(item["id"], "UPDATE", "Runs marathons", "Walks")])
        memory.history(item["id"])  # a read while the owner is open
        # the delete the store shows is committed; the update it does not show is left to its live owner
        assert _rows(history, "late") == [(2, "Runs ultras"), (1, None)]
        assert [s for s, *_ in _rows(history, "flight")] == [0]  # in flight: a read never settles it
        owner.close()
        memory.history(item["id"])  # the owner is gone: its set-aside row is settled (the store does not show it)
        assert _rows(history, "late") == [(1, None)]
        assert [s for s, *_ in _rows(history, "flight")] == [0]  # staged rows wait for a start
        with make_memory(server, store, TEST_DIMS, history_db_path=str(history)):
            assert _rows(history, "flight") == []


_FORKING = textwrap.dedent(
    """
    import os, signal, sys
    from graphmem.lifecycle.history import History, HistoryEvent
    from graphmem.types import Scope

    log = History(sys.argv[1])
    log.stage("forked", Scope.of(user_id="u"), [HistoryEvent("m-never", "ADD", None, "never stored")])
    if os.fork() == 0:  # a worker forked by the owner outlives it, holding a copy of its descriptors
        print(os.getpid(), flush=True)
        sys.stdin.readline()
        os._exit(0)
    os.kill(os.getpid(), signal.SIGKILL)
    """
)


def test_a_forked_child_does_not_keep_its_dead_parent_s_rows_alive(server, tmp_path):
    history = tmp_path / "history.db"
    proc = subprocess.Popen([sys.executable, "-c", _FORKING, str(history)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None and proc.stdin is not None
    worker = int(proc.stdout.readline())
    try:
        assert proc.wait(30) == -signal.SIGKILL
        assert [s for s, *_ in _rows(history, "forked")] == [0]
        config = {"llm": llm_config(server), "embedder": {"provider": "hashing", "config": {"dims": TEST_DIMS}},
                  "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "graph")}},
                  "history_db_path": str(history), "warm_up": False}
        with Memory(config) as memory:
            assert _rows(history, "forked") == []  # its owner is dead, whatever its child holds
            # the worker took a lock of its own (a new token): kept beside this process's
            assert len(_lock_files(history) - {memory.history_log._owner.token}) == 1
    finally:
        proc.stdin.close()
        os.kill(worker, signal.SIGKILL)
