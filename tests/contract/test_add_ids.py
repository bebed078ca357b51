"""Every add has an id you can use, on every store: ``add`` / ``add_many`` return it, history rows
carry it, a relation's provenance names it, ``provenance(add_id)`` resolves it (memory-only adds too)
and answers NotFoundError alike for an unknown id and another scope's; a keyed retry answers the same
id; the add's result says what retired a relation as a read does after. Scripted model over HTTP."""

from __future__ import annotations

import asyncio
import sqlite3
import uuid

import pytest
from conftest import TEST_DIMS
from helpers import graph, make_memory, script

from graphmem import AsyncMemory
from graphmem.errors import NotFoundError
from graphmem.lifecycle.history import History, HistoryEvent
from graphmem.types import Scope


@pytest.fixture(params=["staged", "single_pass"])
def memory(request, server, store, tmp_path):
    # a history of its own: the default file under ~/.graphmem is shared with every other process
    with make_memory(server, store, TEST_DIMS, add_mode=request.param, history_db_path=str(tmp_path / "history.db")) as m:
        yield m


def _live_in_boston(server, uid: str) -> None:
    script(server, graph([("Boston", "city")], [("I", "lives_in", "Boston")]))
    server.enqueue("extract_facts", {"facts": ["Lives in Boston"]})


def _not_found(call) -> str:
    with pytest.raises(NotFoundError) as caught:
        call()
    return str(caught.value)


def test_an_add_returns_the_id_its_relations_history_and_provenance_carry(memory, server, uid):
    _live_in_boston(server, uid)
    added = memory.add("I live in Boston", user_id=uid)
    add_id = added["add_id"]
    assert isinstance(add_id, str) and add_id
    ((rel,), (mem,)) = memory.get_all(user_id=uid)["relations"], memory.get_all(user_id=uid)["results"]
    assert rel["provenance"] == {"added_by": [add_id], "retired_by": None}
    assert added["relations"][0]["provenance"] == rel["provenance"]  # the result says what a read says after
    assert [(row["event"], row["add_id"]) for row in memory.history(mem["id"])] == [("ADD", add_id)]
    why = memory.provenance(add_id, user_id=uid)
    assert why["add_id"] == add_id and [e["new_memory"] for e in why["memories"]] == ["Lives in Boston"]


def test_a_memory_only_add_is_traced_by_its_id(memory, server, uid):
    server.enqueue("extract_facts", {"facts": ["Prefers tea"]})  # no entity, no relation: only a memory
    inferred = memory.add("I prefer tea", user_id=uid)
    verbatim = memory.add("note: call the bank", user_id=uid, infer=False)
    for added, text in ((inferred, "Prefers tea"), (verbatim, "note: call the bank")):
        assert added["relations"] == []
        why = memory.provenance(added["add_id"], user_id=uid)
        assert [(e["event"], e["new_memory"], e["add_id"]) for e in why["memories"]] == [("ADD", text, added["add_id"])]
        assert why["relations"] == {"asserted": [], "retired": []}
        (mem,) = [m for m in memory.get_all(user_id=uid)["results"] if m["memory"] == text]
        assert memory.history(mem["id"])[0]["add_id"] == added["add_id"]
    assert inferred["add_id"] != verbatim["add_id"]


def test_the_result_shows_what_retired_a_relation_as_the_timeline_does(memory, server, uid):
    _live_in_boston(server, uid)
    first = memory.add("I live in Boston", user_id=uid)
    script(server, graph([("Denver", "city")], [("I", "lives_in", "Denver")], deletions=[(uid, "LIVES_IN", "Boston")]))
    server.enqueue("extract_facts", {"facts": ["Lives in Denver"]})
    server.set_handler(lambda tool, body: {"memory": [{"id": "0", "text": "Lives in Denver", "event": "UPDATE"}]}
                       if tool == "update_memory" else None)
    moved = memory.add("I moved to Denver", user_id=uid)
    reported = {r["destination"]: r for r in moved["relations"]}
    assert reported["Boston"]["event"] == "INVALIDATE"
    assert reported["Boston"]["provenance"] == {"added_by": [first["add_id"]], "retired_by": moved["add_id"]}
    timeline = {r["destination"]: r for r in memory.timeline("me", user_id=uid)["relations"]}
    assert reported["Boston"]["provenance"] == timeline["Boston"]["provenance"]
    assert reported["Denver"]["provenance"] == timeline["Denver"]["provenance"] == {"added_by": [moved["add_id"]], "retired_by": None}


def test_a_reasserted_relation_reports_every_add_that_asserted_it(memory, server, uid):
    _live_in_boston(server, uid)
    first = memory.add("I live in Boston", user_id=uid)
    _live_in_boston(server, uid)
    server.set_handler(lambda tool, body: {"memory": [{"id": "0", "text": "Lives in Boston", "event": "NONE"}]}
                       if tool == "update_memory" else None)
    again = memory.add("Still in Boston", user_id=uid)
    (rel,) = memory.get_all(user_id=uid)["relations"]
    assert again["relations"][0]["provenance"] == rel["provenance"] == {"added_by": [first["add_id"], again["add_id"]],
                                                                        "retired_by": None}


def test_provenance_of_an_unknown_id_or_another_scopes_add_is_not_found_alike(memory, server, uid):
    _live_in_boston(server, uid)
    theirs = memory.add("I live in Boston", user_id=uid)["add_id"]
    unknown = uuid.uuid4().hex
    other = f"other-{uuid.uuid4().hex[:8]}"
    messages = [_not_found(lambda i=i: memory.provenance(i, user_id=other)).replace(i, "ID") for i in (theirs, unknown)]
    assert messages[0] == messages[1] and "ID" in messages[0] and uid not in messages[0]
    assert _not_found(lambda: memory.provenance(theirs, agent_id=f"bot-{uuid.uuid4().hex[:6]}")).replace(theirs, "ID") == messages[0]
    assert isinstance(NotFoundError("x"), KeyError)  # mem0 callers catching KeyError/ValueError still do


def test_a_keyed_retry_answers_the_same_add_id(memory, server, uid):
    _live_in_boston(server, uid)
    first = memory.add("I live in Boston", user_id=uid, idempotency_key="k-1")
    assert memory.add("I live in Boston", user_id=uid, idempotency_key="k-1")["add_id"] == first["add_id"]
    kept = memory.add("a note", user_id=uid, infer=False, idempotency_key="k-2")
    assert memory.add("a note", user_id=uid, infer=False, idempotency_key="k-2")["add_id"] == kept["add_id"]
    empty = memory.add([{"role": "system", "content": "be brief"}], user_id=uid, idempotency_key="k-3")  # nothing to read
    assert empty["results"] == [] and memory.add([{"role": "system", "content": "be brief"}], user_id=uid,
                                                 idempotency_key="k-3")["add_id"] == empty["add_id"]
    _not_found(lambda: memory.provenance(empty["add_id"], user_id=uid))  # it recorded nothing


def test_add_many_returns_each_committed_adds_id(memory, server, uid):
    items = [{"messages": f"note {i}", "user_id": uid} for i in range(3)] + [{"messages": "x"}]  # the last has no scope
    done = memory.add_many(items, infer=False)
    assert [(a["index"], a["key"]) for a in done["adds"]] == [(0, None), (1, None), (2, None)] and len(done["failed"]) == 1
    for added in done["adds"]:
        (event,) = memory.provenance(added["add_id"], user_id=uid)["memories"]
        assert event["new_memory"] == f"note {added['index']}"
    server.enqueue("extract_facts", {"facts": ["Likes jazz"]})
    key = f"jazz-{uid}"  # a bulk key is the database's, not the scope's
    (inferred,) = memory.add_many([{"messages": "I like jazz", "user_id": uid, "key": key}])["adds"]
    assert inferred["key"] == key
    assert [e["new_memory"] for e in memory.provenance(inferred["add_id"], user_id=uid)["memories"]] == ["Likes jazz"]


def test_async_add_returns_its_id(server, store, tmp_path, uid):
    config = {"llm": {"provider": "openai_compatible", "config": {"base_url": server.base_url, "api_key": "k", "retry_wait": 0.01}},
              "embedder": {"provider": "hashing", "config": {"dims": TEST_DIMS}}, "history_db_path": str(tmp_path / "h.db")}

    async def run() -> None:
        memory = AsyncMemory(config, store=store)
        try:
            added = await memory.add("kept as said", user_id=uid, infer=False)
            why = await memory.provenance(added["add_id"], user_id=uid)
            assert [e["new_memory"] for e in why["memories"]] == ["kept as said"]
        finally:
            await memory.close()

    asyncio.run(run())


def test_a_history_database_from_before_add_ids_is_migrated(tmp_path):
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as db:  # the table as an older graphmem made it: no add_id, no expires_at
        db.execute("CREATE TABLE history (seq INTEGER PRIMARY KEY AUTOINCREMENT, id TEXT NOT NULL UNIQUE, memory_id TEXT NOT NULL, "
                   "old_memory TEXT, new_memory TEXT, event TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT, "
                   "is_deleted INTEGER NOT NULL DEFAULT 0, actor_id TEXT, role TEXT, user_id TEXT, agent_id TEXT, run_id TEXT, "
                   "committed INTEGER NOT NULL DEFAULT 0)")
        db.execute("INSERT INTO history (id, memory_id, new_memory, event, created_at, user_id, committed) "
                   "VALUES ('h1', 'm1', 'old fact', 'ADD', '2024-01-01T00:00:00Z', 'ann', 1)")
    history = History(path)
    try:
        scope = Scope.of(user_id="ann")
        history.stage("add-2", scope, [HistoryEvent("m1", "UPDATE", "old fact", "new fact")])
        history.commit("add-2")
        assert [(r["new_memory"], r["add_id"]) for r in history.history("m1")] == [("old fact", None), ("new fact", "add-2")]
        assert [r["new_memory"] for r in history.of_add(scope, "add-2")] == ["new fact"]
    finally:
        history.close()
