"""Scope reads as mem0 does them, on every store: a read sees everything written with the ids it names,
whatever other ids the write carried; "I" is one node per user; reads never cross users."""

from __future__ import annotations

import uuid

import pytest
from conftest import TEST_DIMS
from helpers import graph, make_memory, script

from graphmem import MissingScopeError


@pytest.fixture
def memory(server, store, tmp_path):
    return make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "h.db"))


def fresh(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def tell(server, memory, fact: str, place: str, **ids):
    self_name = ids.get("user_id") or ids.get("agent_id") or ids.get("run_id")
    script(server, graph([(self_name, "person"), (place, "city")], [(self_name, "visited", place)]))
    server.enqueue("extract_facts", {"facts": [fact]})
    return memory.add(f"I visited {place}", **ids)


def facts(result) -> set[str]:
    return {r["memory"] for r in result["results"]}


def places(result) -> set[str]:
    return {r["destination"] for r in result["relations"]}


def test_a_user_read_sees_the_users_runs_and_agents(memory, server, store):
    user, other = fresh("u"), fresh("u")
    tell(server, memory, "Visited Paris", "Paris", user_id=user)
    tell(server, memory, "Visited Rome", "Rome", user_id=user, run_id="trip-1")
    tell(server, memory, "Visited Oslo", "Oslo", user_id=user, agent_id="planner", run_id="trip-2")
    tell(server, memory, "Visited Lima", "Lima", user_id=other, run_id="trip-1")

    everything = memory.get_all(user_id=user)
    assert facts(everything) == {"Visited Paris", "Visited Rome", "Visited Oslo"}
    assert places(everything) == {"Paris", "Rome", "Oslo"}
    run = memory.get_all(user_id=user, run_id="trip-1")
    assert facts(run) == {"Visited Rome"} and places(run) == {"Rome"}
    agent = memory.get_all(user_id=user, agent_id="planner")
    assert facts(agent) == {"Visited Oslo"} and places(agent) == {"Oslo"}
    assert facts(memory.search("visited", user_id=user, run_id="trip-2")) == {"Visited Oslo"}
    assert facts(memory.search("visited", user_id=user)) == {"Visited Paris", "Visited Rome", "Visited Oslo"}
    # reads never cross users: the other user's trip-1 stays theirs
    assert "Visited Lima" not in facts(memory.get_all(user_id=user, run_id="trip-1"))
    assert facts(memory.get_all(user_id=other)) == {"Visited Lima"}
    # "I" is one node per user across runs and agents
    names = [e.name for e in store.entities(_scope(user))]
    assert names.count(user) == 1 and sorted(names) == sorted([user, "Paris", "Rome", "Oslo"])
    # the same relation said in two runs: each run keeps its own instance
    tell(server, memory, "Visited Rome", "Rome", user_id=user, run_id="trip-9")
    assert places(memory.get_all(user_id=user, run_id="trip-9")) == {"Rome"}
    assert places(memory.get_all(user_id=user, run_id="trip-1")) == {"Rome"}


def test_an_agent_read_without_user_sees_only_agent_writes(memory, server):
    user, agent = fresh("u"), fresh("a")
    tell(server, memory, "Visited Bern", "Bern", agent_id=agent)
    tell(server, memory, "Visited Kyiv", "Kyiv", user_id=user, agent_id=agent)
    assert facts(memory.get_all(agent_id=agent)) == {"Visited Bern"}  # never another user's memories
    assert facts(memory.get_all(user_id=user, agent_id=agent)) == {"Visited Kyiv"}


def test_delete_all_of_a_run_leaves_the_rest_of_the_user(memory, server):
    user = fresh("u")
    tell(server, memory, "Visited Paris", "Paris", user_id=user)
    tell(server, memory, "Visited Rome", "Rome", user_id=user, run_id="trip-1")
    memory.delete_all(user_id=user, run_id="trip-1")
    assert facts(memory.get_all(user_id=user)) == {"Visited Paris"} and places(memory.get_all(user_id=user)) == {"Paris"}
    memory.delete_all(user_id=user)
    assert memory.get_all(user_id=user) == {"results": [], "relations": []}


def test_writes_and_reads_still_need_an_id(memory):
    with pytest.raises(MissingScopeError):
        memory.add("hello", infer=False)
    with pytest.raises(MissingScopeError):
        memory.get_all(filters={"category": "x"})


def _scope(user):
    from graphmem.types import Scope

    return Scope.of(user_id=user)
