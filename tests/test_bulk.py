"""Memory.add_many and `graphmem import` on both stores: order per scope, resume, whole adds after
Ctrl-C, concurrency across scopes, bad items. No timings are asserted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import uuid
from itertools import groupby
from pathlib import Path

import pytest
from conftest import TEST_DIMS, make_store
from helpers import make_memory

from graphmem.ingest.bulk import BadItem
from graphmem.ingest.verbatim import lane_of
from graphmem.types import Scope

STORES = ["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)]


@pytest.fixture(params=STORES)
def memory(request, server, tmp_path):
    store = make_store(request.param, request, tmp_path)
    m = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "history.db"))
    yield m
    m.close()


def turns(prefix: str, scopes: list[str], per_scope: int) -> list[dict]:
    """Items interleaved across scopes; line i of scope s says "s-i question" / "s-i answer"."""
    return [
        {"messages": [{"role": "user", "content": f"{s} {i} question"}, {"role": "assistant", "content": f"{s} {i} answer"}],
         "user_id": f"{prefix}-{s}", "key": f"{prefix}-{s}-{i}", "metadata": {"i": i}}
        for i in range(per_scope) for s in scopes
    ]  # fmt: skip


def logged(memory, user_id: str) -> list[str]:
    return [m.content for m in memory.store.conversation(Scope.of(user_id), 1000).messages]


def test_verbatim_batches_keep_each_scope_in_order_and_resume(memory, uid):
    items = turns(uid, ["a", "b", "c"], 7)
    first = memory.add_many(items[:10], infer=False, batch_size=4)
    assert (first["added"], first["skipped"], first["failed"], first["messages"]) == (10, 0, [], 20)
    again = memory.add_many(items, infer=False, batch_size=4)  # the first 10 were imported: skipped
    assert (again["added"], again["skipped"], again["failed"]) == (11, 10, [])
    for s in "abc":
        expected = [text for i in range(7) for text in (f"{s} {i} question", f"{s} {i} answer")]
        assert logged(memory, f"{uid}-{s}") == expected
        stored = memory.get_all(user_id=f"{uid}-{s}")["results"]
        assert sorted(m["memory"] for m in stored) == sorted(expected)  # each once: nothing imported twice
    assert memory.add_many(items, infer=False)["skipped"] == len(items)


def test_bad_items_are_reported_and_the_others_imported(memory, uid):
    items = turns(uid, ["a"], 4)
    items.insert(1, {"messages": "no scope here"})
    items.insert(3, BadItem("line 4: not JSON", "bad-key"))
    items.insert(4, {"messages": "x", "user_id": f"{uid}-a", "metadata": "not a dict"})
    items.append({"messages": "y", "user_id": f"{uid}-a", "unexpected": 1})
    result = memory.add_many(items, infer=False, batch_size=3)
    assert result["added"] == 4
    assert sorted(f["index"] for f in result["failed"]) == [1, 3, 4, 7]
    assert "not JSON" in next(f["error"] for f in result["failed"] if f["index"] == 3)
    assert len(memory.get_all(user_id=f"{uid}-a")["results"]) == 8


def test_a_failing_batch_falls_back_to_single_adds(memory, uid):
    items = turns(uid, ["a"], 3)
    memory.add_many(items[1:2], infer=False)
    # the store refuses a key it holds; the batch is retried add by add and only that one fails
    items[1] = {**items[1], "messages": "changed text, same key"}
    memory.store.imported_keys = lambda keys: set()  # pretend the check missed it (two importers racing)
    result = memory.add_many(items, infer=False, batch_size=10)
    assert result["added"] == 2 and [f["index"] for f in result["failed"]] == [1]
    assert len(memory.get_all(user_id=f"{uid}-a")["results"]) == 6


def test_a_bulk_add_stores_what_a_single_add_stores(memory, uid):
    said = "2021-03-04T05:06:07.123456+00:00"
    item = {"messages": [{"role": "user", "content": "I moved to Denver last week"}, {"role": "assistant", "content": "Noted."}],
            "metadata": {"source": "chat", "n": 3}, "timestamp": said, "expiration_date": "2099-01-01"}
    memory.add(item["messages"], user_id=f"{uid}-one", metadata=item["metadata"], infer=False, timestamp=said,
               expiration_date="2099-01-01")
    result = memory.add_many([{**item, "user_id": f"{uid}-bulk", "key": f"{uid}-k"}], infer=False)
    assert result["added"] == 1 and result["failed"] == []

    def stored(user_id: str) -> list[dict]:
        rows = memory.get_all(user_id=user_id)["results"]
        return [{k: v for k, v in r.items() if k not in ("id", "created_at", "updated_at", "user_id")} for r in rows]

    bulk, single = stored(f"{uid}-bulk"), stored(f"{uid}-one")
    assert bulk == single and len(bulk) == 2
    assert all(r["valid_at"].startswith("2021-03-04T05:06:07") and r["said_at"].startswith("2021-03-04T05:06:07") for r in bulk)
    assert [t["text"] for t in bulk[0]["times"]] == ["last week"]
    assert memory.get_all(user_id=f"{uid}-bulk", filters={"valid_at": {"lt": "2022-01-01T00:00:00Z"}})["results"]
    assert logged(memory, f"{uid}-bulk") == logged(memory, f"{uid}-one")


@pytest.mark.parametrize("kind", STORES)
def test_the_log_keeps_the_newest_messages_across_batches(kind, server, request, tmp_path, uid):
    store = make_store(kind, request, tmp_path)
    with make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "h.db"), context={"max_messages": 5}) as m:
        assert m.add_many(turns(uid, ["a", "b"], 7), infer=False, batch_size=4, workers=1)["added"] == 14
        for s in "ab":  # 14 messages per scope, 5 kept: the newest, in order, whatever the batches
            assert logged(m, f"{uid}-{s}") == [f"{s} 4 answer", f"{s} 5 question", f"{s} 5 answer",
                                               f"{s} 6 question", f"{s} 6 answer"]


def test_verbatim_lanes_write_scopes_concurrently_each_in_order(memory, uid):
    """Two scopes of different lanes: each lane's first transaction waits at a barrier that lets
    neither through alone, so the run completes only if both are in flight at once."""
    names = [f"{uid}-{i}" for i in range(50)]
    a = names[0]
    b = next(n for n in names if lane_of(Scope.of(n).key, 2) != lane_of(Scope.of(a).key, 2))
    store, meeting, lock, waited = memory.store, threading.Barrier(2, timeout=30), threading.Lock(), set()
    write_many = store.write_many

    def meeting_write_many(writes):
        with lock:
            first = threading.current_thread().name not in waited
            waited.add(threading.current_thread().name)
        if first:
            meeting.wait()
        return write_many(writes)

    store.write_many = meeting_write_many
    items = [{**item, "user_id": item["user_id"].replace(f"{uid}-a", a).replace(f"{uid}-b", b)} for item in turns(uid, ["a", "b"], 6)]
    result = memory.add_many(items, infer=False, batch_size=3, workers=2)
    assert (result["added"], result["failed"], len(waited)) == (12, [], 2)
    for user_id, s in ((a, "a"), (b, "b")):
        assert logged(memory, user_id) == [t for i in range(6) for t in (f"{s} {i} question", f"{s} {i} answer")]


def test_an_interrupted_run_leaves_whole_adds_and_a_rerun_completes(memory, uid):
    """Ctrl-C reaches the reading thread while lanes are writing: the running batches finish, the
    queued ones are dropped, and running the import again adds exactly the rest."""
    items = turns(uid, [f"s{i}" for i in range(6)], 20)

    def interrupted():
        for n, item in enumerate(items):
            if n == 70:
                raise KeyboardInterrupt
            yield item

    with pytest.raises(KeyboardInterrupt):
        memory.add_many(interrupted(), infer=False, batch_size=5, workers=3)
    partial = {u: memory.get_all(user_id=f"{uid}-s{u}", limit=1000)["results"] for u in range(6)}
    for u, rows in partial.items():
        texts = sorted(r["memory"] for r in rows)
        done = sorted({t.rsplit(" ", 1)[0] for t in texts})
        assert texts == sorted(f"{d} {w}" for d in done for w in ("question", "answer"))  # whole adds, each once
        assert sorted(int(d.split()[1]) for d in done) == list(range(len(done)))  # a prefix of the scope's adds
        assert logged(memory, f"{uid}-s{u}") == [f"s{u} {i} {w}" for i in range(len(done)) for w in ("question", "answer")]
    imported = sum(len(rows) for rows in partial.values()) // 2
    assert 0 < imported <= 70
    again = memory.add_many(items, infer=False, batch_size=5, workers=3)
    assert (again["skipped"], again["added"], again["failed"]) == (imported, len(items) - imported, [])
    for u in range(6):
        assert logged(memory, f"{uid}-s{u}") == [t for i in range(20) for t in (f"s{u} {i} question", f"s{u} {i} answer")]


def test_a_stop_lets_running_batches_finish_and_starts_no_other(memory, uid):
    stop = threading.Event()

    def progress(p):
        stop.set()  # after the first batch: the others are not started

    result = memory.add_many(turns(uid, ["a", "b", "c", "d"], 10), infer=False, batch_size=2, workers=2, progress=progress,
                             stop=stop)
    assert result["stopped"] and result["failed"] == [] and 0 < result["added"] < 40
    stored = sum(len(memory.get_all(user_id=f"{uid}-{s}", limit=100)["results"]) for s in "abcd")
    assert stored == 2 * result["added"]


FACTS = {"a": ["apple orchard", "river bend", "guitar lessons", "planet watching"],
         "b": ["copper mine", "meadow walk", "violin recital", "harbor view"],
         "c": ["tundra trek", "lantern festival", "falcon nest", "quartz clock"]}  # unlike each other: no update stage


def test_infer_runs_scopes_concurrently_each_in_order(memory, server, uid):
    scopes = ["a", "b", "c"]
    meeting = threading.Barrier(2, timeout=20)
    order: list[tuple[str, int]] = []
    lock = threading.Lock()

    def handler(tool, body):
        text = body["messages"][-1]["content"]
        _, scope, i = max((text.rfind(f"{s} {i} question"), s, i) for s in scopes for i in range(4))  # the newest, not the context
        if tool == "extract_facts":
            with lock:
                order.append((scope, i))
            if i == 0 and scope in ("a", "b"):
                meeting.wait()  # returns only if the adds of a and b are in flight at the same time
            return {"facts": [FACTS[scope][i]]}
        return {"extract_entities": {"entities": []}, "establish_relationships": {"relations": []},
                "summarize": {"summary": "s"}}.get(tool or "")

    server.set_handler(handler)
    result = memory.add_many(turns(uid, scopes, 4), workers=3)
    assert result["failed"] == [] and result["added"] == 12
    for s in scopes:
        # a request the client retried after a timeout (a loaded machine) is served twice in a row
        assert [i for i, _ in groupby(i for scope, i in order if scope == s)] == [0, 1, 2, 3]
        assert [m["memory"] for m in memory.get_all(user_id=f"{uid}-{s}")["results"]] == FACTS[s]
    assert memory.add_many(turns(uid, scopes, 4), workers=3)["skipped"] == 12  # keys written with each add


def write_jsonl(path: Path, prefix: str, lines: int) -> None:
    with path.open("w") as f:
        for i in range(lines):
            msgs = [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": f"a{i}"}]
            f.write(json.dumps({"messages": msgs, "user_id": f"{prefix}-{i % 5}"}) + "\n")
        f.write("{not json\n")


@pytest.mark.parametrize("how", ["ctrl-c", "kill"])
@pytest.mark.parametrize("kind", STORES)
def test_an_interrupted_import_leaves_whole_adds_and_a_rerun_completes(kind, how, request, tmp_path):
    """Ctrl-C: the running batches finish and the import says so; kill -9: whatever was committed stays
    and nothing else. Either way every stored add is whole and a rerun imports exactly the rest."""
    prefix = f"u-{uuid.uuid4().hex[:8]}"
    data, lines = tmp_path / "chat.jsonl", 1200
    write_jsonl(data, prefix, lines)
    config = {"history_db_path": str(tmp_path / "history.db"), "embedder": {"provider": "hashing", "config": {"dims": TEST_DIMS}}}
    if kind == "neo4j":
        config["graph_store"] = {"provider": "neo4j", "config": {"url": request.getfixturevalue("neo4j_uri")}}
    else:
        config["graph_store"] = {"provider": "embedded", "config": {"path": str(tmp_path / "graph")}}
    (tmp_path / "config.json").write_text(json.dumps(config))
    cmd = [sys.executable, "-m", "graphmem.cli.main", "import", str(data), "--no-infer", "--batch-size", "10",
           "--progress", "lines", "--config", str(tmp_path / "config.json")]
    env = {**os.environ, "OPENAI_API_KEY": "unused"}
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    first = proc.stderr.readline()
    assert first.startswith("imported"), first
    proc.send_signal(signal.SIGINT if how == "ctrl-c" else signal.SIGKILL)
    rest = proc.stderr.read()
    assert proc.wait(timeout=120) == (130 if how == "ctrl-c" else -signal.SIGKILL), rest
    assert ("interrupted" in rest) == (how == "ctrl-c")

    def stored() -> list[str]:
        from graphmem import Memory

        with Memory({**config, "llm": {"provider": "openai_compatible", "config": {"base_url": "http://127.0.0.1:9/v1"}}}) as m:
            return [x["memory"] for u in range(5) for x in m.get_all(user_id=f"{prefix}-{u}", limit=10_000)["results"]]

    partial = stored()
    imported = {int(t[1:]) for t in partial if t.startswith("q")}
    assert 0 < len(imported) < lines
    assert sorted(partial) == sorted(f"{c}{i}" for i in imported for c in "qa")  # whole adds only, each once
    for u in range(5):  # each scope: a prefix of its lines
        mine = sorted(i for i in imported if i % 5 == u)
        assert mine == list(range(u, u + 5 * len(mine), 5))
    done = subprocess.run(cmd + ["--json"], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 1, done.stderr  # the bad last line is reported; every other line is in
    summary = json.loads(done.stdout)
    assert summary["skipped"] == len(imported) and summary["added"] == lines - len(imported)
    assert [f["index"] for f in summary["failed"]] == [lines]
    assert sorted(stored()) == sorted(f"{c}{i}" for i in range(lines) for c in "qa")
