"""Faults and races against the real stores and servers (issue 33): exactly-once adds with
idempotency keys, writes whose commit outcome is unknown (a Bolt COMMIT whose answer is lost; an
embedded journal that cannot be restored after an I/O failure), kill -9 of ``graphmem serve``
mid-burst, and one winner per race on delete/update of one memory. Bounded: small bursts, few
trials; the heavier soak is benchmarks/faults/fault_soak.py."""

from __future__ import annotations

import os
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial

import httpx
import pytest
from conftest import TEST_DIMS
from helpers import make_memory
from servers import CommitCut, free_port, graphmem_command, running, write_config

from graphmem import errors
from graphmem.stores.embedded import EmbeddedStore
from graphmem.stores.embedded import journal as journal_module
from graphmem.testing import ScriptedLLMServer

STORES = ["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)]


@pytest.fixture
def memory(server, store, tmp_path):
    m = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "history.db"))
    yield m
    m.flush()


def _ids(result: dict) -> list[str]:
    return [r["id"] for r in result["results"]]


# --- idempotency keys (Python API, both stores) ------------------------------------------------------


def test_a_retried_verbatim_add_returns_the_first_outcome_and_writes_nothing(memory, uid):
    first = memory.add("I keep bees", user_id=uid, infer=False, idempotency_key="req-1")
    again = memory.add("I keep bees", user_id=uid, infer=False, idempotency_key="req-1")
    assert _ids(again) == _ids(first) and again["results"] == first["results"]
    assert [m["id"] for m in memory.get_all(user_id=uid)["results"]] == _ids(first)
    assert [h["event"] for h in memory.history(_ids(first)[0])] == ["ADD"]


def test_a_retried_inferred_add_asks_the_model_nothing_and_writes_nothing(memory, server, uid):
    server.enqueue("extract_facts", {"facts": ["Keeps bees"]})
    first = memory.add("I keep bees", user_id=uid, idempotency_key="req-2")
    calls = server.calls()
    again = memory.add("I keep bees", user_id=uid, idempotency_key="req-2")
    assert server.calls() == calls, "a replay asks the model nothing"
    assert again["results"] == first["results"] and again["usage"]["llm_requests"] == 0
    assert [m["memory"] for m in memory.get_all(user_id=uid)["results"]] == ["Keeps bees"]


def test_the_same_key_with_another_payload_is_a_conflict_that_writes_nothing(memory, uid):
    memory.add("I keep bees", user_id=uid, infer=False, idempotency_key="req-3")
    with pytest.raises(errors.IdempotencyConflictError, match="req-3"):
        memory.add("I keep wasps", user_id=uid, infer=False, idempotency_key="req-3")
    with pytest.raises(errors.IdempotencyConflictError):
        memory.add("I keep bees", user_id=uid, infer=False, metadata={"x": 1}, idempotency_key="req-3")
    assert [m["memory"] for m in memory.get_all(user_id=uid)["results"]] == ["I keep bees"]


def test_keys_are_scoped_one_users_key_says_nothing_of_anothers(memory, uid):
    other = uid + "-other"
    mine = memory.add("I keep bees", user_id=uid, infer=False, idempotency_key="shared")
    theirs = memory.add("I keep wasps", user_id=other, infer=False, idempotency_key="shared")  # no conflict, no replay
    assert _ids(mine) != _ids(theirs)
    assert [m["memory"] for m in memory.get_all(user_id=other)["results"]] == ["I keep wasps"]


@pytest.mark.parametrize("bad", ["", "   ", "x" * 256, "a\nb", 7])
def test_a_bad_key_is_refused_before_any_work(memory, uid, bad):
    with pytest.raises(errors.InvalidInputError):
        memory.add("I keep bees", user_id=uid, infer=False, idempotency_key=bad)
    assert memory.get_all(user_id=uid)["results"] == []


def test_concurrent_adds_with_one_key_write_once_and_answer_alike(memory, uid):
    gate = threading.Barrier(6)

    def add(_: int) -> list[str]:
        gate.wait(5)
        return _ids(memory.add("I keep bees", user_id=uid, infer=False, idempotency_key="race"))

    with ThreadPoolExecutor(6) as pool:
        answers = list(pool.map(add, range(6)))
    assert len({tuple(a) for a in answers}) == 1
    assert len(memory.get_all(user_id=uid)["results"]) == 1


def test_the_key_outlives_a_restart(server, tmp_path, uid):
    def open_memory():
        store = EmbeddedStore(path=tmp_path / "graph", embedding_dims=TEST_DIMS)
        return make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "history.db"))

    with open_memory() as m:
        first = m.add("I keep bees", user_id=uid, infer=False, idempotency_key="req-restart")
    with open_memory() as m:
        again = m.add("I keep bees", user_id=uid, infer=False, idempotency_key="req-restart")
        assert _ids(again) == _ids(first) and len(m.get_all(user_id=uid)["results"]) == 1


# --- one winner per race (both stores) ---------------------------------------------------------------


def _message(method, *args) -> str:
    return method(*args)["message"]


def _race(jobs: list) -> list:
    gate = threading.Barrier(len(jobs))

    def run(job) -> str:
        gate.wait(10)
        try:
            return job()
        except errors.NotFoundError:
            return "not-found"

    with ThreadPoolExecutor(len(jobs)) as pool:
        return list(pool.map(run, jobs))


def test_of_concurrent_deletes_exactly_one_wins(memory, uid):
    for trial in range(4):
        (mid,) = _ids(memory.add(f"fact {trial}", user_id=uid, infer=False))
        outcomes = _race([partial(_message, memory.delete, mid)] * 6)
        assert outcomes.count("not-found") == 5, (trial, outcomes)
        assert [h["event"] for h in memory.history(mid)] == ["ADD", "DELETE"], trial


def test_updates_racing_a_delete_leave_a_valid_history(memory, uid):
    for trial in range(4):
        (mid,) = _ids(memory.add(f"fact {trial}", user_id=uid, infer=False))
        jobs = [partial(_message, memory.update, mid, f"fact {trial} v{i}") for i in range(3)]
        jobs += [partial(_message, memory.delete, mid)] * 3
        outcomes = _race(jobs)
        updated = sum(o.startswith("Memory updated") for o in outcomes[:3])
        assert outcomes[3:].count("not-found") == 2, (trial, outcomes)
        events = [h["event"] for h in memory.history(mid)]
        assert events == ["ADD"] + ["UPDATE"] * updated + ["DELETE"], (trial, outcomes, events)
        assert memory.get(mid) is None


# --- writes whose commit outcome is unknown ----------------------------------------------------------


def test_embedded_journal_that_cannot_be_restored_is_outcome_unknown_then_settled(server, tmp_path, uid, monkeypatch):
    """fsync fails after the record was written, and removing it again fails too: the record may
    be durable. The add says so (WriteOutcomeUnknown), the store reloads what the file holds, and
    history and a keyed retry agree with it, before and after a restart."""

    def open_memory():
        return make_memory(server, EmbeddedStore(path=tmp_path / "graph", embedding_dims=TEST_DIMS), TEST_DIMS,
                           history_db_path=str(tmp_path / "history.db"))

    m = open_memory()
    real_fsync, real_truncate = os.fsync, os.ftruncate
    faults = {"fsync": 1, "ftruncate": 1}

    def once(name, real):
        def call(*args):
            if faults[name]:
                faults[name] -= 1
                raise OSError(5, f"injected {name} failure")
            return real(*args)
        return call

    monkeypatch.setattr(journal_module.os, "fsync", once("fsync", real_fsync))
    monkeypatch.setattr(journal_module.os, "ftruncate", once("ftruncate", real_truncate))
    with pytest.raises(errors.WriteOutcomeUnknown) as caught:
        m.add("I keep bees", user_id=uid, infer=False, idempotency_key="k-journal")
    monkeypatch.undo()
    assert caught.value.idempotency_key == "k-journal" and "k-journal" in str(caught.value)
    (mid,) = caught.value.memory_ids
    assert m.get(mid)["memory"] == "I keep bees"  # the journal held it whole: the store now shows it
    assert [h["event"] for h in m.history(mid)] == ["ADD"]  # settled on read, not dropped
    again = m.add("I keep bees", user_id=uid, infer=False, idempotency_key="k-journal")
    assert _ids(again) == [mid]
    m.close()
    with open_memory() as m:
        assert [x["id"] for x in m.get_all(user_id=uid)["results"]] == [mid]
        assert [h["event"] for h in m.history(mid)] == ["ADD"]


def _link(neo4j_uri: str) -> CommitCut:
    host, port = neo4j_uri.rsplit("//", 1)[1].split(":")
    return CommitCut(host, int(port))


@pytest.mark.neo4j
def test_neo4j_commit_whose_answer_is_lost_is_outcome_unknown_then_settled(neo4j_uri, server, tmp_path, uid):
    """Neo4j received COMMIT and committed; the answer never came back. Before: a plain 503 and the
    history rows dropped for good (the memory stored without its ADD row), a retry stored a twin."""
    from graphmem.stores.neo4j import Neo4jStore

    link = _link(neo4j_uri)
    history = str(tmp_path / "history.db")
    store = Neo4jStore(url=f"bolt://127.0.0.1:{link.port}", embedding_dims=TEST_DIMS, max_retry_time=2.0)
    m = make_memory(server, store, TEST_DIMS, history_db_path=history)
    store.wait_warm(120)  # the plans made ahead commit too: the cut is for the add's
    try:
        link.arm()
        with pytest.raises(errors.WriteOutcomeUnknown) as caught:
            m.add("I keep bees", user_id=uid, infer=False, idempotency_key="k-bolt")
        assert link.fired.is_set()
        assert isinstance(caught.value, errors.StoreUnavailableError) and caught.value.add_id
        (mid,) = caught.value.memory_ids
        link.restore()
        assert m.get(mid)["memory"] == "I keep bees"  # it did commit
        assert [h["event"] for h in m.history(mid)] == ["ADD"]  # and its audit row is there
        again = m.add("I keep bees", user_id=uid, infer=False, idempotency_key="k-bolt")
        assert _ids(again) == [mid] and len(m.get_all(user_id=uid)["results"]) == 1
        # an inferred add in the lock's transaction: the same answer
        server.enqueue("extract_facts", {"facts": ["Sells honey"]})
        link.arm()
        with pytest.raises(errors.WriteOutcomeUnknown) as caught:
            m.add("I sell honey", user_id=uid, idempotency_key="k-bolt-2")
        link.restore()
        again = m.add("I sell honey", user_id=uid, idempotency_key="k-bolt-2")
        assert _ids(again) == list(caught.value.memory_ids)
    finally:
        link.restore()
        m.close()
        link.cut()
    with make_memory(server, Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS), TEST_DIMS, history_db_path=history) as m:
        texts = sorted(x["memory"] for x in m.get_all(user_id=uid)["results"])
        assert texts == ["I keep bees", "Sells honey"]
        assert all([h["event"] for h in m.history(x["id"])] == ["ADD"] for x in m.get_all(user_id=uid)["results"])


# --- the REST server: kill -9 mid-burst, Idempotency-Key, races, outcome unknown ---------------------


def _config(request, tmp_path, store: str, llm_url: str, neo4j_uri: str | None = None) -> str:
    uri = neo4j_uri or (request.getfixturevalue("neo4j_uri") if store == "neo4j" else None)
    return str(write_config(tmp_path, llm_url, store, uri))


def _post(client: httpx.Client, user: str, i: int) -> httpx.Response:
    return client.post("/memories", json={"messages": [{"role": "user", "content": f"fact {i} of {user}"}], "user_id": user,
                                          "infer": False}, headers={"Idempotency-Key": f"{user}-{i}"})


@dataclass
class Burst:
    """A burst of keyed adds to ``graphmem serve``, the server killed (-9) a third of the way, then
    started again; ``client`` talks to the second server."""

    client: httpx.Client
    user: str
    attempts: int
    acked: dict[int, list[str]]


def _burst(port: int, proc, user: str, attempts: int) -> dict[int, list[str]]:
    acked: dict[int, list[str]] = {}
    lock = threading.Lock()

    def send(i: int) -> None:
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=20) as c:
                response = _post(c, user, i)
        except httpx.HTTPError:
            return
        if response.status_code == 200:
            with lock:
                acked[i] = _ids(response.json())
                if len(acked) == attempts // 3:
                    proc.kill()  # SIGKILL: no shutdown, no flush

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(send, range(attempts)))
    return acked


@pytest.fixture(scope="module", params=STORES)
def killed(request, tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("killed")
    with ScriptedLLMServer() as llm:
        config = _config(request, tmp_path, request.param, llm.base_url)
        port, user, attempts = free_port(), f"u-{uuid.uuid4().hex[:8]}", 30
        args = graphmem_command("serve", "--config", config, "--no-auth", "--port", str(port))
        with running(args, f"http://127.0.0.1:{port}/health", tmp_path / "first.log") as proc:
            acked = _burst(port, proc, user, attempts)
        with running(args, f"http://127.0.0.1:{port}/health", tmp_path / "second.log"), \
                httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as client:
            yield Burst(client, user, attempts, acked)
    assert "Traceback" not in (tmp_path / "second.log").read_text(errors="replace")


def test_kill_9_mid_burst_loses_no_acknowledged_add_and_keyed_retries_add_no_twins(killed):
    c, user, attempts, acked = killed.client, killed.user, killed.attempts, killed.acked
    assert 0 < len(acked) < attempts, len(acked)
    with ThreadPoolExecutor(8) as pool:  # every request again, the acknowledged ones too
        retried = list(pool.map(partial(_post, c, user), range(attempts)))
    for i, response in enumerate(retried):
        assert response.status_code == 200, response.text
        if i in acked:
            assert _ids(response.json()) == acked[i], "a retry answers the first outcome"
    stored = c.get("/memories", params={"user_id": user, "limit": 1000}).json()["results"]
    texts = [m["memory"] for m in stored]
    assert sorted(texts) == sorted(f"fact {i} of {user}" for i in range(attempts)), "none lost, none twice"
    with ThreadPoolExecutor(8) as pool:
        histories = list(pool.map(lambda m: c.get(f"/memories/{m['id']}/history").json(), stored))
    assert all([h["event"] for h in events] == ["ADD"] for events in histories), histories


def _status(method, *args, **kwargs) -> int:
    return method(*args, **kwargs).status_code


def test_rest_reused_key_with_another_body_is_422_and_writes_nothing(killed):
    rest = killed.client
    user = f"u-{uuid.uuid4().hex[:8]}"
    assert _post(rest, user, 1).status_code == 200
    body = {"messages": [{"role": "user", "content": "something else"}], "user_id": user, "infer": False}
    conflict = rest.post("/memories", json=body, headers={"Idempotency-Key": f"{user}-1"})
    assert conflict.status_code == 422 and conflict.json()["error"] == "IdempotencyConflictError"
    assert len(rest.get("/memories", params={"user_id": user}).json()["results"]) == 1


def test_rest_concurrent_delete_and_put_have_one_winner_and_no_500(killed):
    rest = killed.client
    user = f"u-{uuid.uuid4().hex[:8]}"
    for trial in range(3):
        (mid,) = _ids(_post(rest, user, trial).json())
        jobs = [partial(_status, rest.delete, f"/memories/{mid}")] * 4
        jobs += [partial(_status, rest.put, f"/memories/{mid}", json={"text": f"v{i}"}) for i in range(4)]
        codes = _race(jobs)
        deletes, puts = codes[:4], codes[4:]
        assert sorted(deletes) == [200, 404, 404, 404], (trial, codes)
        assert set(puts) <= {200, 404}, (trial, codes)
        events = [h["event"] for h in rest.get(f"/memories/{mid}/history").json()]
        assert events == ["ADD"] + ["UPDATE"] * puts.count(200) + ["DELETE"], (trial, codes, events)


@pytest.mark.neo4j
def test_rest_lost_commit_answer_is_503_write_outcome_unknown_and_the_retry_answers_it(neo4j_uri, tmp_path, server):
    link = _link(neo4j_uri)
    config = _config(None, tmp_path, "neo4j", server.base_url, neo4j_uri=f"bolt://127.0.0.1:{link.port}")
    port, user = free_port(), f"u-{uuid.uuid4().hex[:8]}"
    args = graphmem_command("serve", "--config", config, "--no-auth", "--port", str(port))
    try:
        with running(args, f"http://127.0.0.1:{port}/health", tmp_path / "server.log"), \
                httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as c:
            link.arm()
            lost = _post(c, user, 1)
            assert lost.status_code == 503 and lost.json()["error"] == "WriteOutcomeUnknown", lost.text
            assert f"{user}-1" in lost.json()["detail"]
            link.restore()
            retried = _post(c, user, 1)
            assert retried.status_code == 200
            stored = c.get("/memories", params={"user_id": user}).json()["results"]
            assert [m["id"] for m in stored] == _ids(retried.json())
            assert [h["event"] for h in c.get(f"/memories/{stored[0]['id']}/history").json()] == ["ADD"]
    finally:
        link.cut()


# --- ownership before loading; the MCP door -----------------------------------------------------------


def test_a_lookup_with_owners_never_returns_another_users_memory(memory, uid):
    from graphmem.types import Owners

    (mid,) = _ids(memory.add("I keep bees", user_id=uid, infer=False))
    assert memory.get(mid, owners=Owners(users=(uid,)))["memory"] == "I keep bees"
    assert memory.get(mid, owners=Owners(prefixes=(uid[:4],)))["memory"] == "I keep bees"
    assert memory.get(mid, owners=Owners(users=("someone-else",), prefixes=("x-",))) is None
    assert memory.store.get_memory(mid, Owners(users=("someone-else",))) is None  # the store's own lookup says nothing
    assert memory.get("no-such-id", owners=Owners(users=(uid,))) is None


def test_mcp_add_memory_takes_an_idempotency_key(tmp_path, server):
    import asyncio
    import sys

    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    config = write_config(tmp_path, server.base_url, "embedded")
    user = f"u-{uuid.uuid4().hex[:8]}"
    params = StdioServerParameters(command=sys.executable, args=graphmem_command("mcp", "--user", user, "--config", str(config))[1:])

    async def add(client, text: str):
        result = await client.call_tool("add_memory", {"messages": text, "infer": False, "idempotency_key": "mcp-1"})
        return result

    async def main() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            first, again, other = await add(client, "I keep bees"), await add(client, "I keep bees"), await add(client, "wasps")
            assert not first.is_error and not again.is_error
            assert first.structured_content["results"] == again.structured_content["results"]
            assert other.is_error and "IdempotencyConflictError" in other.content[0].text
            listed = await client.call_tool("get_memories", {})
            assert len(listed.structured_content["results"]) == 1

    asyncio.run(main())
