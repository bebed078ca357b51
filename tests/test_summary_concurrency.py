"""Concurrent rolling summaries of one scope: one summary per scope, the newest one.

Several ``Memory`` instances (on Neo4j each with its own store, as separate processes have) add to
one scope and summarise it at once. The store must end with exactly one summary for the scope (one
``(:Summary)`` node on Neo4j), holding the highest ``through`` any of them stored, whatever the
interleaving; erasure removes it.
"""

from __future__ import annotations

import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone

import pytest
from conftest import TEST_DIMS, make_store
from helpers import make_memory

from graphmem.types import Scope, utcnow

THREADS = 6
ROUNDS = 3
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def _summaries(raw_driver, scope: Scope) -> list[dict]:
    records, _, _ = raw_driver.execute_query("MATCH (s:Summary) WHERE s.scope = $scope RETURN properties(s) AS p", scope=scope.key)
    return [r["p"] for r in records]


def _summarize_concurrently(server, stores, uid: str, tmp_path) -> list[tuple[int, str, bool]]:
    """THREADS memories, each adding a message then summarising, ROUNDS times, all at once; returns
    every set_summary call the stores saw: (through_seq, text, stored)."""
    server.set_handler(lambda tool, body: {"summary": f"summary {uuid.uuid4().hex[:8]}"} if tool == "summarize" else None)
    calls: list[tuple[int, str, bool]] = []
    guard = threading.Lock()
    for store in set(stores):
        real = store.set_summary

        def recorded(scope, text, through_seq, at, _real=real):  # the real store's answer, recorded
            stored = _real(scope, text, through_seq, at)
            with guard:
                calls.append((through_seq, text, stored))
            return stored

        store.set_summary = recorded
    memories = [make_memory(server, s, TEST_DIMS, history_db_path=str(tmp_path / f"h{i}.db"), context={"summary_every": 0})
                for i, s in enumerate(stores)]
    start = threading.Barrier(THREADS)

    def work(i: int) -> None:
        for r in range(ROUNDS):
            memories[i].add(f"message {i}.{r}", user_id=uid, infer=False)
            start.wait()  # every memory summarises at once, some having read the others' messages
            memories[i].summarize(user_id=uid)

    with ThreadPoolExecutor(THREADS) as pool:
        list(pool.map(work, range(THREADS)))
    return calls


@pytest.mark.neo4j
def test_concurrent_summaries_leave_one_summary_node_the_newest(server, request, tmp_path, raw_driver, uid):
    stores = [make_store("neo4j", request, tmp_path) for _ in range(THREADS)]
    try:
        calls = _summarize_concurrently(server, stores, uid, tmp_path)
        scope = Scope.of(user_id=uid)
        newest = max(through for through, _, _ in calls)
        nodes = _summaries(raw_driver, scope)
        assert len(nodes) == 1, f"{len(nodes)} Summary nodes for one scope"
        assert nodes[0]["through"] == newest and nodes[0]["user_id"] == uid
        assert (newest, nodes[0]["text"], True) in calls  # the text a call with the highest through stored
        assert stores[0].conversation(scope, 0).summary == nodes[0]["text"]
        stores[0].delete_all(scope)
        assert _summaries(raw_driver, scope) == [] and stores[1].conversation(scope, 0).summary is None
    finally:
        for s in stores:
            s.close()


def test_concurrent_summaries_on_the_embedded_store_keep_the_newest(server, request, tmp_path, uid):
    store = make_store("embedded", request, tmp_path)  # one open store per folder: the memories share it
    try:
        calls = _summarize_concurrently(server, [store] * THREADS, uid, tmp_path)
        scope = Scope.of(user_id=uid)
        newest = max(through for through, _, _ in calls)
        log = store.conversation(scope, 0)
        assert log.summary_through == newest and (newest, log.summary, True) in calls
        store.delete_all(scope)
        assert store.conversation(scope, 0).summary is None
    finally:
        store.close()


@pytest.mark.neo4j
def test_setup_keeps_the_newest_of_an_earlier_versions_twin_summaries(neo4j_uri, raw_driver, uid):
    """A database an earlier graphmem wrote: the plain summary_scope index and several (:Summary)
    nodes for one scope. setup() keeps the one covering the most messages, drops the index and
    creates the uniqueness constraint; a scope with one summary keeps it."""
    from graphmem.stores.neo4j import Neo4jStore

    twins, single = Scope.of(user_id=uid), Scope.of(user_id=f"{uid}-single")
    raw_driver.execute_query("DROP CONSTRAINT summary_scope_unique IF EXISTS")
    raw_driver.execute_query("CREATE INDEX summary_scope IF NOT EXISTS FOR (s:Summary) ON (s.scope)")
    raw_driver.execute_query(
        "UNWIND $rows AS row CREATE (s:Summary {scope: row.scope, user_id: row.user, text: row.text, through: row.through})",
        rows=[{"scope": twins.key, "user": uid, "text": f"through {t}", "through": t} for t in (2, 5, 3)]
        + [{"scope": single.key, "user": f"{uid}-single", "text": "alone", "through": 1}],
    )
    with Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS, warm_plans=False) as store:
        store.setup()
        assert [n["text"] for n in _summaries(raw_driver, twins)] == ["through 5"]
        assert [n["text"] for n in _summaries(raw_driver, single)] == ["alone"]
        records, _, _ = raw_driver.execute_query(
            "SHOW INDEXES YIELD name, owningConstraint WHERE name STARTS WITH 'summary_scope' RETURN name, owningConstraint")
        assert [(r["name"], r["owningConstraint"]) for r in records] == [("summary_scope_unique", "summary_scope_unique")]
        assert store.set_summary(twins, "through 6", 6, utcnow()) is True
        assert [n["text"] for n in _summaries(raw_driver, twins)] == ["through 6"]
        store.delete_all(twins)
        store.delete_all(single)
    assert _summaries(raw_driver, twins) == [] == _summaries(raw_driver, single)


@pytest.mark.neo4j
def test_concurrent_set_summary_always_keeps_the_highest_through(request, tmp_path, raw_driver, uid):
    """The race behind the flaky summary half of test_concurrent_adds_of_one_scope_never_share_a_seq
    ("through 7"): the earlier set_summary collected the scope's summaries, then read their through;
    one deleted meanwhile by a concurrent summary's commit read as null, the comparison with null was
    null and the newest summary was not stored. Many rounds of eight at once, each in a fresh scope."""
    store = make_store("neo4j", request, tmp_path)
    try:
        with ThreadPoolExecutor(8) as pool:
            for round_ in range(15):
                scope = Scope.of(user_id=f"{uid}-{round_}")
                stored = list(pool.map(lambda i, s=scope: store.set_summary(s, f"through {i}", i, T0), range(1, 9)))
                log = store.conversation(scope, 0)
                assert (log.summary, log.summary_through, stored[-1]) == ("through 8", 8, True), f"round {round_}"
                assert len(_summaries(raw_driver, scope)) == 1
                store.delete_all(scope)
    finally:
        store.close()
