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
from pathlib import Path

import pytest
from conftest import TEST_DIMS, make_store
from helpers import make_memory

from graphmem.bulk import BadItem
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
        assert [i for scope, i in order if scope == s] == [0, 1, 2, 3]
        assert [m["memory"] for m in memory.get_all(user_id=f"{uid}-{s}")["results"]] == FACTS[s]
    assert memory.add_many(turns(uid, scopes, 4), workers=3)["skipped"] == 12  # keys written with each add


def write_jsonl(path: Path, prefix: str, lines: int) -> None:
    with path.open("w") as f:
        for i in range(lines):
            msgs = [{"role": "user", "content": f"q{i}"}, {"role": "assistant", "content": f"a{i}"}]
            f.write(json.dumps({"messages": msgs, "user_id": f"{prefix}-{i % 5}"}) + "\n")
        f.write("{not json\n")


@pytest.mark.parametrize("kind", STORES)
def test_ctrl_c_leaves_whole_adds_and_a_rerun_completes(kind, request, tmp_path):
    prefix = f"u-{uuid.uuid4().hex[:8]}"
    data, lines = tmp_path / "chat.jsonl", 1200
    write_jsonl(data, prefix, lines)
    config = {"history_db_path": str(tmp_path / "history.db"), "embedder": {"provider": "hashing", "config": {"dims": TEST_DIMS}}}
    if kind == "neo4j":
        config["graph_store"] = {"provider": "neo4j", "config": {"url": request.getfixturevalue("neo4j_uri")}}
    else:
        config["graph_store"] = {"provider": "embedded", "config": {"path": str(tmp_path / "graph")}}
    (tmp_path / "config.json").write_text(json.dumps(config))
    cmd = [sys.executable, "-m", "graphmem.cli", "import", str(data), "--no-infer", "--batch-size", "10",
           "--progress", "lines", "--config", str(tmp_path / "config.json")]
    env = {**os.environ, "OPENAI_API_KEY": "unused"}
    proc = subprocess.Popen(cmd, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    first = proc.stderr.readline()
    assert first.startswith("imported"), first
    proc.send_signal(signal.SIGINT)
    rest = proc.stderr.read()
    assert proc.wait(timeout=120) == 130, rest
    assert "interrupted" in rest

    def stored() -> list[str]:
        from graphmem import Memory

        with Memory({**config, "llm": {"provider": "openai_compatible", "config": {"base_url": "http://127.0.0.1:9/v1"}}}) as m:
            return [x["memory"] for u in range(5) for x in m.get_all(user_id=f"{prefix}-{u}", limit=10_000)["results"]]

    partial = stored()
    imported = {int(t[1:]) for t in partial if t.startswith("q")}
    assert 0 < len(imported) < lines
    assert sorted(partial) == sorted(f"{c}{i}" for i in imported for c in "qa")  # whole adds only, each once
    done = subprocess.run(cmd + ["--json"], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 1, done.stderr  # the bad last line is reported; every other line is in
    summary = json.loads(done.stdout)
    assert summary["skipped"] == len(imported) and summary["added"] == lines - len(imported)
    assert [f["index"] for f in summary["failed"]] == [lines]
    assert sorted(stored()) == sorted(f"{c}{i}" for i in range(lines) for c in "qa")
