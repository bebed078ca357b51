"""The staged add runs its invalidation and memory-update requests at once (graphmem/ingest/overlap.py)
and keeps its guarantees: the answer used is the one to the request that saw what was retired, usage
counts every request, a failure of either branch fails the add whole. Every store, the scripted
model over HTTP."""

from __future__ import annotations

import threading
import uuid

import pytest
from conftest import TEST_DIMS
from helpers import graph, llm_config, script

from graphmem import LLMError, Memory
from graphmem.embeddings import HashingEmbedder
from graphmem.testing import Fault


@pytest.fixture
def memory(store, server, tmp_path):
    config = {"llm": llm_config(server, max_retries=0, timeout=30),
              "history_db_path": str(tmp_path / "h.db")}
    m = Memory(config, store=store, embedder=HashingEmbedder(dims=TEST_DIMS))
    yield m
    m.close()


@pytest.fixture
def user() -> str:
    return f"o-{uuid.uuid4().hex[:8]}"


def live(memory, user) -> list[str]:
    return sorted(r["memory"] for r in memory.get_all(user_id=user)["results"])


def boston(server, memory, user):
    script(server, graph([(user, "person"), ("Boston", "city")], [(user, "lives_in", "Boston")]))
    server.enqueue("extract_facts", {"facts": ["Lives in Boston"]})
    memory.add("I live in Boston.", user_id=user)


def answer_by_marks(update_marked, update_plain, invalidation=None):
    """The model's update answer depends on what the request shows (a memory marked no longer true
    or not), as a careful model's would; ``invalidation``: called with the request body first."""

    def answer(tool, body):
        if tool == "delete_graph_memory" and invalidation is not None:
            return invalidation(body)
        if tool == "update_memory":
            marked = "no_longer_true" in body["messages"][-1]["content"]
            return {"memory": update_marked if marked else update_plain}
        return None

    return answer


def test_the_update_request_is_sent_while_the_invalidation_is_pending(server, memory, user):
    """The invalidation's answer waits until an update request has arrived: in sequence it never would
    (the wait ends after 20 s and the test fails); the answer used is the one that saw the retirement."""
    boston(server, memory, user)
    arrived = threading.Event()
    seen_before_answer = []

    def invalidation(body):
        seen_before_answer.append(arrived.wait(20))
        return {"relations": [{"source": user, "relationship": "lives_in", "destination": "Boston"}]}

    handler = answer_by_marks([{"id": "0", "text": "Lives in Denver", "event": "UPDATE"}],
                              [{"id": "0", "text": "Lives in Boston", "event": "NONE"}], invalidation)

    def answer(tool, body):
        if tool == "update_memory":
            arrived.set()
        return handler(tool, body)

    server.set_handler(answer)
    script(server, graph([(user, "person"), ("Denver", "city")], [(user, "lives_in", "Denver")]))
    server.enqueue("extract_facts", {"facts": ["Lives in Denver"]})
    before = len(server.requests)
    result = memory.add("I moved to Denver.", user_id=user)
    assert seen_before_answer == [True]
    assert live(memory, user) == ["Lives in Denver"]  # the answer to the request marking Boston no longer true
    assert result["usage"]["llm_requests"] == len(server.requests) - before  # every request of the add, counted


def test_a_retirement_no_guess_foresaw_asks_the_update_again_with_it(server, memory, user):
    """GAVE_AWAY retiring OWNS is no replacement a guess foresees: the update asked beside the
    invalidation (nothing retired) is not used; it is asked again, marking the retired relation's memory."""
    script(server, graph([(user, "person"), ("Rex", "animal")], [(user, "owns", "Rex")]))
    server.enqueue("extract_facts", {"facts": ["Owns a dog named Rex"]})
    memory.add("I have a dog, Rex.", user_id=user)
    server.set_handler(answer_by_marks([{"id": "0", "text": "", "event": "DELETE"}, {"id": "1", "text": "Gave Rex away", "event": "ADD"}],
                                       [{"id": "0", "text": "Owns a dog named Rex", "event": "NONE"},
                                        {"id": "1", "text": "Gave Rex away", "event": "ADD"}]))
    script(server, graph([(user, "person"), ("Rex", "animal")], [(user, "gave_away", "Rex")],
                         deletions=[(user, "owns", "Rex")]))
    server.enqueue("extract_facts", {"facts": ["Gave Rex away"]})
    before = len(server.requests)
    result = memory.add("I gave Rex away.", user_id=user)
    updates = [r for r in server.requests[before:] if r.tool == "update_memory"]
    assert ["no_longer_true" in r.body["messages"][-1]["content"] for r in updates] == [False, True]
    assert live(memory, user) == ["Gave Rex away"]
    assert result["usage"]["llm_requests"] == len(server.requests) - before == 5
    assert result["usage"]["by_stage"]["memory_update"]["llm_requests"] == 2


def test_a_failed_invalidation_fails_the_add_whole_after_the_update_beside_it(server, memory, user):
    boston(server, memory, user)
    server.set_handler(answer_by_marks([{"id": "0", "text": "Lives in Denver", "event": "UPDATE"}],
                                       [{"id": "0", "text": "Lives in Boston", "event": "NONE"}]))
    server.inject(Fault.SERVER_ERROR, times=1, tool="delete_graph_memory")
    script(server, graph([(user, "person"), ("Denver", "city")], [(user, "lives_in", "Denver")]))
    server.enqueue("extract_facts", {"facts": ["Lives in Denver"]})
    before = memory.get_all(user_id=user)
    with pytest.raises(LLMError):
        memory.add("I moved to Denver.", user_id=user)
    sent = len(server.requests)
    assert memory.get_all(user_id=user) == before  # nothing of the add was written
    assert any(r.tool == "update_memory" for r in server.requests)  # the request beside it was made ...
    memory.flush()
    assert len(server.requests) == sent  # ... and was over before add() raised: nothing of it is left running


def test_a_retirement_that_shows_the_update_the_same_uses_the_early_answer(server, memory, user):
    """The model retires WORKS_AT Acme, which the guess (nothing retired: LOVES replaces nothing)
    did not foresee; no memory states it or mentions Acme, so the update request asked beside the
    invalidation showed what a sequential add would show: it is used, not asked again (4 requests)."""
    boston(server, memory, user)
    script(server, graph([(user, "person"), ("Acme", "organization")], [(user, "works_at", "Acme")]))
    server.enqueue("extract_facts", {"facts": []})
    memory.add("I work at Acme.", user_id=user)
    server.set_handler(answer_by_marks([{"id": "0", "text": "", "event": "DELETE"}],
                                       [{"id": "0", "text": "Lives in Boston", "event": "NONE"},
                                        {"id": "1", "text": "Loves Boston", "event": "ADD"}]))
    script(server, graph([(user, "person"), ("Boston", "city")], [(user, "loves", "Boston")],
                         deletions=[(user, "works_at", "Acme")]))
    server.enqueue("extract_facts", {"facts": ["Loves Boston"]})
    before = len(server.requests)
    result = memory.add("I quit Acme. I love Boston.", user_id=user)
    updates = [r for r in server.requests[before:] if r.tool == "update_memory"]
    assert len(updates) == 1 and "no_longer_true" not in updates[0].body["messages"][-1]["content"]
    assert live(memory, user) == ["Lives in Boston", "Loves Boston"]
    assert result["usage"]["llm_requests"] == len(server.requests) - before == 4


def test_an_entity_named_without_a_new_relation_has_its_relations_guessed_retired(server, memory, user):
    """"Rex died" names Rex and relates it to nothing new: the guess is that Rex's relations end, so
    the update request marking "owns Rex" no longer true is sent while the invalidation is pending
    (before, the guess was "nothing retired", no memory was a candidate, and the update was asked
    only after the invalidation answered: one more model round trip)."""
    script(server, graph([(user, "person"), ("Rex", "animal")], [(user, "owns", "Rex")]))
    server.enqueue("extract_facts", {"facts": ["Owns a dog named Rex"]})
    memory.add("I have a dog, Rex.", user_id=user)
    arrived = threading.Event()
    seen_before_answer = []

    def invalidation(body):
        seen_before_answer.append(arrived.wait(10))
        return {"relations": [{"source": user, "relationship": "owns", "destination": "Rex"}]}

    handler = answer_by_marks([{"id": "0", "text": "Rex died", "event": "UPDATE"}],
                              [{"id": "0", "text": "Owns a dog named Rex", "event": "NONE"},
                               {"id": "1", "text": "Rex died", "event": "ADD"}], invalidation)

    def answer(tool, body):
        if tool == "update_memory":
            arrived.set()
        return handler(tool, body)

    server.set_handler(answer)
    script(server, graph([(user, "person"), ("Rex", "animal")], []))
    server.enqueue("extract_facts", {"facts": ["Rex died"]})
    before = len(server.requests)
    result = memory.add("Rex died last week.", user_id=user)
    updates = [r for r in server.requests[before:] if r.tool == "update_memory"]
    assert seen_before_answer == [True]
    assert ["no_longer_true" in r.body["messages"][-1]["content"] for r in updates] == [True]
    assert live(memory, user) == ["Rex died"]
    assert [r["event"] for r in result["relations"]] == ["INVALIDATE"]
    assert result["usage"]["llm_requests"] == len(server.requests) - before == 4
