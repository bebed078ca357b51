"""Memories and relations agree in search (retrieval.agreement): a memory stating a relation the
graph retired for a newer one ranks below the others and says which relation replaced it; a memory
stating a current relation is offered with it; verbatim memories are left alone. Every store."""

from __future__ import annotations

import uuid

import pytest
from conftest import TEST_DIMS
from helpers import graph, make_memory, script


@pytest.fixture
def memory(server, store, tmp_path):
    m = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "h.db"))
    yield m
    m.close()


@pytest.fixture
def user() -> str:
    return f"u-{uuid.uuid4().hex[:8]}"


def _say(server, memory, user, text, when, facts, entities, relations, deletions=None, kept=0):
    """One add; with ``kept`` memories shown to the update stage, it keeps them (NONE) and adds the facts."""
    script(server, graph(entities, relations, deletions))
    server.enqueue("extract_facts", {"facts": facts})
    if kept:
        keep = [{"id": str(i), "text": "", "event": "NONE"} for i in range(kept)]
        server.enqueue("update_memory", {"memory": keep + [{"id": str(kept + i), "text": f, "event": "ADD"} for i, f in enumerate(facts)]})
    return memory.add(text, user_id=user, timestamp=when)


def _moved(server, memory, user):
    _say(server, memory, user, "I live in Boston.", "2021-03-01", ["Lives in Boston"], [("Boston", "city")], [("I", "lives_in", "Boston")])
    # the update stage kept the old memory: the graph retired the relation, the memories disagree
    _say(server, memory, user, "I moved to Denver, I live in Denver now.", "2024-06-01", ["Lives in Denver"], [("Denver", "city")],
         [("I", "lives_in", "Denver")], deletions=[("I", "lives_in", "Boston")], kept=1)


def _relation(memory, user, destination, **kw):
    found = memory.search("where do I live?", user_id=user, **kw)["relations"]
    return next(r for r in found if r["destination"] == destination)


def test_a_memory_of_a_retired_relation_ranks_below_the_current_one_and_says_so(server, memory, user):
    _moved(server, memory, user)
    result = memory.search("where do I live in Boston or Denver?", user_id=user)
    texts = [m["memory"] for m in result["results"]]
    assert texts.index("Lives in Denver") < texts.index("Lives in Boston")
    old = next(m for m in result["results"] if m["memory"] == "Lives in Boston")
    new = next(m for m in result["results"] if m["memory"] == "Lives in Denver")
    denver = _relation(memory, user, "Denver")
    superseded = old["graph"]["superseded"]
    assert superseded["by"] == denver["id"]
    assert "Denver" in superseded["current"] and "Boston" in superseded["fact"]
    assert old["scores"]["superseded"] == 1.0 and old["score"] < new["score"]
    assert new["graph"] == {"relations": [denver["id"]]}  # the relation that supports it is offered with it


def test_before_the_move_the_boston_memory_is_current(server, memory, user):
    _moved(server, memory, user)
    result = memory.search("where do I live in Boston?", user_id=user, as_of="2022-01-01")
    old = next(m for m in result["results"] if m["memory"] == "Lives in Boston")
    boston = _relation(memory, user, "Boston", as_of="2022-01-01")
    assert old["graph"] == {"relations": [boston["id"]]}
    assert "superseded" not in old.get("scores", {})


def test_verbatim_memories_are_left_alone(server, memory, user):
    _moved(server, memory, user)
    memory.add("I live in Boston, near the harbour.", user_id=user, infer=False, timestamp="2021-02-01")
    result = memory.search("where do I live in Boston?", user_id=user)
    said = next(m for m in result["results"] if m["memory"].startswith("I live in Boston"))
    assert "graph" not in said and "superseded" not in said.get("scores", {})


def test_a_memory_naming_the_place_for_another_reason_is_not_superseded(server, memory, user):
    _moved(server, memory, user)
    _say(server, memory, user, "I visited Boston last week.", "2024-07-01", ["Visited Boston"], [("Boston", "city")],
         [("I", "visited", "Boston")], kept=1)
    result = memory.search("what about Boston?", user_id=user)
    visit = next(m for m in result["results"] if m["memory"] == "Visited Boston")
    assert "superseded" not in visit.get("graph", {})


def test_a_memory_of_a_relation_retired_with_nothing_in_its_place_is_marked(server, memory, user):
    _say(server, memory, user, "I work at Globex.", "2021-03-01", ["Works at Globex"], [("Globex", "company")],
         [("I", "works_at", "Globex")])
    _say(server, memory, user, "I quit Globex, I don't work at Globex anymore.", "2024-06-01", ["Quit Globex"], [("Globex", "company")],
         [("I", "quit", "Globex")], deletions=[("I", "works_at", "Globex")], kept=1)
    result = memory.search("do I work at Globex?", user_id=user)
    old = next(m for m in result["results"] if m["memory"] == "Works at Globex")
    assert old["graph"]["superseded"]["by"] is None and "Globex" in old["graph"]["superseded"]["fact"]
    assert result["results"][-1]["memory"] == "Works at Globex"
