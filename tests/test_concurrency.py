"""AsyncMemory and per-scope write serialisation: threads, asyncio and (on Neo4j) two processes.

An add reads the scope, asks the LLM, then writes. Two adds of one scope must not interleave there
(each would miss the other's fact and both would ADD it); adds of different scopes must not wait
for each other. The scripted LLM server slows or holds fact extraction to force the overlap.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from conftest import ROOT, TEST_DIMS
from helpers import llm_config, make_memory

from graphmem import AsyncMemory, Memory
from graphmem.aio import public_methods

FACT = "Likes green tea"


def _same_fact_answers(arrivals: threading.Barrier):
    """Every add extracts FACT; the update stage (only asked when FACT already exists) keeps it.
    Fact extraction waits until both adds asked for it (or 2 s when the scope lock holds the second
    one back), so without the lock both adds would read the scope before either writes."""

    def answer(tool, body):
        if tool == "extract_facts":
            try:
                arrivals.wait(2)
            except threading.BrokenBarrierError:
                pass
            return {"facts": [FACT]}
        if tool == "update_memory":
            return {"memory": [{"id": "0", "text": FACT, "event": "NONE"}]}
        return None

    return answer


def _same_fact_script(server) -> None:
    server.set_handler(_same_fact_answers(threading.Barrier(2)))


@pytest.fixture
def memory(server, store, tmp_path):
    m = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "history.db"), similar_memory_threshold=0.0,
                    llm=llm_config(server, timeout=120, max_retries=0))
    yield m
    m.flush()


def test_async_memory_has_every_public_method_of_memory():
    names = public_methods(Memory)
    assert {"add", "search", "get", "get_all", "update", "delete", "delete_all", "history", "timeline", "summarize",
            "get_summary", "reset", "close"} <= set(names)
    for name in names:
        assert inspect.iscoroutinefunction(getattr(AsyncMemory, name)), name
        assert getattr(AsyncMemory, name).__doc__ == getattr(Memory, name).__doc__
    public_async = {n for n, _ in inspect.getmembers(AsyncMemory, inspect.isfunction) if not n.startswith("_")}
    assert public_async - {"from_config"} == set(names)


def test_threads_adding_to_one_scope_see_each_other(memory, server, uid):
    _same_fact_script(server)
    threads = [threading.Thread(target=memory.add, args=("I like green tea",), kwargs={"user_id": uid}) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert [m["memory"] for m in memory.get_all(user_id=uid)["results"]] == [FACT]
    assert server.calls("update_memory") == 1  # the second add saw the first one's memory


def test_asyncio_adds_same_scope_serialised_other_scopes_parallel(memory, server, uid):
    other = uid + "-other"
    released = threading.Event()
    same_fact = _same_fact_answers(threading.Barrier(2))

    def handler(tool, body):
        if tool == "extract_facts" and "held up" in json.dumps(body.get("messages")):
            released.wait(90)  # scope `other` is stuck in the LLM until the adds of `uid` finished
            return {"facts": ["Was held up"]}
        return same_fact(tool, body)

    server.set_handler(handler)

    async def main() -> list[bool]:
        am = AsyncMemory(memory=memory)
        held = asyncio.create_task(am.add("I was held up", user_id=other))
        await asyncio.sleep(0.05)
        await asyncio.gather(am.add("I like green tea", user_id=uid), am.add("I like green tea", user_id=uid))
        finished_before_release = not held.done()
        released.set()
        await held
        return [finished_before_release]

    assert asyncio.run(main()) == [True]
    assert [m["memory"] for m in memory.get_all(user_id=uid)["results"]] == [FACT]
    assert [m["memory"] for m in memory.get_all(user_id=other)["results"]] == ["Was held up"]


def test_async_memory_round_trip_and_errors(server, tmp_path, uid):
    from graphmem.embeddings import HashingEmbedder
    from graphmem.errors import InvalidInputError, NotFoundError
    cfg = {"llm": llm_config(server), "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "g")}},
           "history_db_path": str(tmp_path / "h.db")}

    async def main() -> None:
        async with AsyncMemory(cfg, embedder=HashingEmbedder(dims=64)) as am:
            added = await am.add([{"role": "user", "content": "I live in Lisbon"}], user_id=uid, infer=False)
            mem_id = added["results"][0]["id"]
            assert (await am.get(mem_id))["memory"] == "I live in Lisbon"
            found = await am.search("Lisbon", user_id=uid, limit=3)
            assert found["results"][0]["id"] == mem_id
            await am.update(mem_id, "I live in Porto")
            assert [e["event"] for e in await am.history(mem_id)] == ["ADD", "UPDATE"]
            with pytest.raises(InvalidInputError):
                await am.search("x")  # no scope
            with pytest.raises(NotFoundError):
                await am.delete("nope")
            await am.delete(mem_id)
            assert await am.get(mem_id) is None

    asyncio.run(main())


CHILD = """
import sys
sys.path.insert(0, {tests!r})
from graphmem import Memory
from graphmem.embeddings import HashingEmbedder
from graphmem.stores.neo4j import Neo4jStore
uri, base_url, uid, history = sys.argv[1:5]
cfg = {{"llm": {{"provider": "openai_compatible", "config": {{"base_url": base_url, "api_key": "k", "model": "m", "timeout": 30, "max_retries": 0}}}},
       "history_db_path": history, "similar_memory_threshold": 0.0}}
with Memory(cfg, store=Neo4jStore(url=uri, embedding_dims={dims}), embedder=HashingEmbedder(dims={dims})) as m:
    print(",".join(r["event"] for r in m.add("I like green tea", user_id=uid)["results"]))
"""


@pytest.mark.neo4j
def test_two_processes_adding_to_one_scope_on_neo4j(neo4j_uri, server, uid, tmp_path):
    _same_fact_script(server)
    code = CHILD.format(tests=str(ROOT / "tests"), dims=TEST_DIMS)
    procs = [
        subprocess.Popen([sys.executable, "-c", code, neo4j_uri, server.base_url, uid, str(tmp_path / f"h{i}.db")],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(2)
    ]
    outputs = [p.communicate(timeout=90) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outputs
    assert sorted(out.strip() for out, _ in outputs) == ["", "ADD"]  # one added it, the other saw it
    with _reader(neo4j_uri, tmp_path) as m:
        assert [x["memory"] for x in m.get_all(user_id=uid)["results"]] == [FACT]
    assert server.calls("update_memory") == 1


def _reader(uri: str, tmp_path: Path) -> Memory:
    from graphmem.embeddings import HashingEmbedder
    from graphmem.stores.neo4j import Neo4jStore

    return Memory({"history_db_path": str(tmp_path / "reader.db"), "llm": {"provider": "openai_compatible", "config": {
        "base_url": "http://127.0.0.1:9/v1", "api_key": "k", "model": "m"}}},
                  embedder=HashingEmbedder(dims=TEST_DIMS), store=Neo4jStore(url=uri, embedding_dims=TEST_DIMS))
