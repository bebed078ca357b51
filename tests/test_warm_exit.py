"""A process that exits without close() while the plan warmer runs: the exit waits for the statement
in flight and plans nothing after it (warm.Warmer.stop_at_exit, registered with atexit). Before, the
daemon thread drove the Neo4j driver while the interpreter finalised, and 1-6 runs of 10-15 died in
a segmentation fault or an abort."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from tests.conftest import TEST_DIMS

SLOW_JOBS = textwrap.dedent(
    """
    import sys, time
    from graphmem.stores.neo4j import warm

    def plan_one(group, read):
        print("start", group[0], flush=True)
        time.sleep(0.5)
        print("done", group[0], flush=True)

    w = warm.Warmer([(("a",), True), (("b",), True), (("c",), True)], plan_one).start()
    while True:  # exit as soon as the first job is in flight
        time.sleep(0.01)
        if w.thread.is_alive():
            break
    time.sleep(0.1)
    """
)


def test_exit_waits_for_the_job_in_flight_and_plans_nothing_after_it():
    out = subprocess.run([sys.executable, "-c", SLOW_JOBS], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    # without the atexit hook the daemon thread dies in its sleep: "done a" never printed
    assert out.stdout.split("\n")[:2] == ["start a", "done a"]
    assert "b" not in out.stdout and "c" not in out.stdout


def test_a_finished_warmer_leaves_no_exit_hook():
    from graphmem.stores.neo4j import warm

    w = warm.Warmer([(("a",), True)], lambda group, read: None).start()
    w.thread.join(10)
    assert w.done.is_set()
    w.stop_at_exit(wait=0.0)  # nothing left to stop: returns at once
    assert not w.thread.is_alive()


BUILD_AND_EXIT = textwrap.dedent(
    """
    import json, sys
    from graphmem import Memory
    config = json.loads(sys.argv[1])
    Memory.from_config(config)  # the default warm_up: the plan warmer starts; no close()
    """
)


@pytest.mark.neo4j
def test_a_memory_left_open_at_exit_does_not_crash_the_process(neo4j_uri, tmp_path):
    config = {"embedder": {"provider": "hashing", "config": {"dims": TEST_DIMS}},
              "graph_store": {"provider": "neo4j", "config": {"url": neo4j_uri}},
              "history_db_path": str(tmp_path / "history.db")}
    for _ in range(4):
        out = subprocess.run([sys.executable, "-c", BUILD_AND_EXIT, json.dumps(config)], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, (out.returncode, out.stderr[-2000:])


SLOW_STATEMENT_AT_EXIT = textwrap.dedent(
    """
    import atexit, sys, time
    from graphmem.stores.neo4j import Neo4jStore, warm
    from graphmem.stores.neo4j.values import Statement

    store = Neo4jStore(url=sys.argv[1], embedding_dims=8, warm_plans=False)
    slow = Statement("ping", text_override="UNWIND range(1, 4000000000) AS x WITH x WHERE x < 0 RETURN count(x) AS n")

    def plan_one(group, read):
        print("start", group[0].name, flush=True)
        store._plan_one(group, read)
        print("finished", group[0].name, flush=True)  # minutes of counting, unless interrupted

    atexit.register(lambda: print("thread", "alive" if w.thread.is_alive() else "ended", flush=True))  # runs after the stop
    w = warm.Warmer([((slow,), True), ((Statement("ping"),), True)], plan_one, interrupt=store._interrupt_warming)
    w.start()
    time.sleep(3)  # the statement runs on the server: exit now, without close()
    """
)


@pytest.mark.neo4j
def test_exit_ends_the_warmings_statement_in_flight_instead_of_waiting_for_it(neo4j_uri):
    """Before: the exit waited for the statement in flight (up to 30 s: the 21 s exit after a
    ``--no-warm`` server start). Now its connection is shut: the statement fails at once, is not
    retried, nothing after it is planned, and the thread has ended when the process exits. The
    statement counts to 4e9 (minutes); the bound is far below that."""
    out = subprocess.run([sys.executable, "-c", SLOW_STATEMENT_AT_EXIT, neo4j_uri], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    lines = out.stdout.split()
    assert "finished" not in lines and lines.count("start") == 1, out.stdout  # interrupted, and nothing planned after
    assert out.stdout.strip().endswith("thread ended"), out.stdout
