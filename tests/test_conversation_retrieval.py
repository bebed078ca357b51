"""Conversation-aware search on every store: neighbouring messages by turn order, and time
expressions resolved at ingestion and matched against the question's time."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from conftest import TEST_DIMS
from helpers import llm_config

from graphmem import Memory, SearchPreset
from graphmem.embeddings import HashingEmbedder
from graphmem.retrieval import HYBRID
from graphmem.retrieval.when import available, candidate_phrases, parse_query, resolve
from graphmem.stores.memory_context import ContextQuery
from graphmem.testing import ScriptedLLMServer
from graphmem.types import Scope

needs_dates = pytest.mark.skipif(not available(), reason="dateparser (the 'dates' extra, part of 'dev') is not installed")
MAY_8 = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)


@pytest.fixture
def memory(store, tmp_path):
    with ScriptedLLMServer() as server:
        m = Memory({"llm": llm_config(server), "history_db_path": str(tmp_path / "h.db")}, store=store, embedder=HashingEmbedder(TEST_DIMS))
        yield m
        assert not server.requests, "search and infer=False never call the LLM"


def _texts(results):
    return [r["memory"] for r in results]


MEETING = [
    "Jon: How did you two meet, Gina?",
    "Gina: At yoga in the park, years back.",
    "Jon: I am opening a dance studio downtown.",
    "Gina: Good luck with the studio!",
]


def _conversation(memory, uid, turns=MEETING, when="2023-05-08T10:00:00Z"):
    for turn in turns:  # one add per message, as a chat agent sends them
        memory.add(turn, user_id=uid, infer=False, timestamp=when)


def test_the_turn_after_a_matching_question_is_found_although_it_shares_no_word(memory, uid):
    _conversation(memory, uid)
    question = "How did Gina and Jon meet?"
    plain = SearchPreset("plain", HYBRID.weights)
    assert "Gina: At yoga in the park, years back." not in _texts(memory.search(question, user_id=uid, limit=2, preset=plain)["results"])
    ranked = _texts(memory.search(question, user_id=uid, limit=2)["results"])
    assert ranked == ["Jon: How did you two meet, Gina?", "Gina: At yoga in the park, years back."]


def test_neighbours_as_context_ride_on_their_hit(memory, uid):
    _conversation(memory, uid)
    results = memory.search("How did Gina and Jon meet?", user_id=uid, limit=1, preset="hybrid_context")["results"]
    assert _texts(results) == ["Jon: How did you two meet, Gina?"]
    (after,) = results[0]["context"]  # the first message has nothing before it
    assert after["memory"] == "Gina: At yoga in the park, years back." and after["offset"] == 1


def test_neighbours_follow_when_messages_were_said_not_when_they_were_stored(memory, store, uid):
    memory.add("Jon: The studio opens next week.", user_id=uid, infer=False, timestamp="2023-05-09T10:00:00Z")
    memory.add("Jon: I lost my job at the bank.", user_id=uid, infer=False, timestamp="2023-05-01T10:00:00Z")
    memory.add("Gina: Oh no, what happened?", user_id=uid, infer=False, timestamp="2023-05-01T10:05:00Z")
    memory.add("Jon: I will open a dance studio.", user_id=uid, infer=False, timestamp="2023-05-01T10:10:00Z")
    lost = next(m for m in memory.get_all(user_id=uid)["results"] if "bank" in m["memory"])
    found = store.memory_context(Scope(user_id=uid), ContextQuery(HashingEmbedder(TEST_DIMS).embed_one("x"), [lost["id"]], 2, 2))
    assert [(n.offset, n.item.text) for n in found.neighbours] == [
        (1, "Gina: Oh no, what happened?"),
        (2, "Jon: I will open a dance studio."),
    ]  # nothing was said before it; "next week" was stored first but said last


def test_neighbours_skip_deleted_messages_and_stay_in_their_scope(memory, store, uid):
    _conversation(memory, uid)
    _conversation(memory, uid + "-other", ["Other: hello", "Other: How did you two meet?", "Other: secret"])
    stored = {m["memory"]: m["id"] for m in memory.get_all(user_id=uid)["results"]}
    memory.delete(stored["Gina: At yoga in the park, years back."])
    found = store.memory_context(
        Scope(user_id=uid), ContextQuery(HashingEmbedder(TEST_DIMS).embed_one("x"), [stored["Jon: How did you two meet, Gina?"]])
    )
    assert [(n.offset, n.item.text) for n in found.neighbours] == [(1, "Jon: I am opening a dance studio downtown.")]
    other = {m["memory"]: m["id"] for m in memory.get_all(user_id=uid + "-other")["results"]}
    leak = store.memory_context(Scope(user_id=uid), ContextQuery(HashingEmbedder(TEST_DIMS).embed_one("x"), [other["Other: How did you two meet?"]]))
    assert leak.neighbours == []  # another scope's hit id gives nothing


def test_memories_without_a_conversation_have_no_neighbours(memory, store, uid):
    memory.add(["Likes tea", "Lives in Oslo"], user_id=uid, infer=False)
    stored = memory.get_all(user_id=uid)["results"]
    assert all(m["said_at"] for m in stored)  # messages: they have a turn
    from graphmem.types import GraphWrite, MemoryWrite, new_id, utcnow

    fact = MemoryWrite("ADD", new_id(), "Allergic to peanuts", HashingEmbedder(TEST_DIMS).embed_one("peanuts"))
    store.write(GraphWrite(new_id(), Scope(user_id=uid), utcnow(), memories=[fact]))  # a fact (infer=True): no turn
    found = store.memory_context(Scope(user_id=uid), ContextQuery(HashingEmbedder(TEST_DIMS).embed_one("x"), [fact.id]))
    assert found.neighbours == []


# --- time in the text -------------------------------------------------------------------------------


def test_phrases_are_picked_by_time_words_and_durations_or_modal_may_are_not_times():
    assert candidate_phrases("Last Saturday we went camping, two weeks ago I painted") == ["Last Saturday", "two weeks ago"]
    assert candidate_phrases("May I ask? I have painted for 7 years now.") == []
    assert candidate_phrases("We met on 8 May 2023 and again in 2019") == ["8 May 2023", "2019"]


@needs_dates
def test_relative_expressions_resolve_against_when_they_were_said():
    spans = {s.text: (s.start.date().isoformat(), s.end.date().isoformat(), s.period) for s in resolve(
        "Last Saturday we went camping; two weeks ago I painted; I moved here in 2019 and start a job next month.", MAY_8)}
    assert spans == {
        "Last Saturday": ("2023-05-06", "2023-05-07", "day"),
        "two weeks ago": ("2023-04-24", "2023-05-01", "week"),
        "2019": ("2019-01-01", "2020-01-01", "year"),
        "next month": ("2023-06-01", "2023-07-01", "month"),
    }
    asked = parse_query("What did Mel do in November 2022?", MAY_8)
    assert [(s.start.date().isoformat(), s.end.date().isoformat()) for s in asked.spans] == [("2022-11-01", "2022-12-01")]
    assert parse_query("When did Mel paint a sunrise?", MAY_8).asks_when


@needs_dates
def test_stored_memories_carry_their_resolved_times(memory, uid):
    memory.add("Mel: I went camping last Saturday", user_id=uid, infer=False, timestamp=MAY_8)
    (stored,) = memory.get_all(user_id=uid)["results"]
    assert stored["said_at"] == "2023-05-08T13:56:00Z"
    assert stored["times"] == [{"text": "last Saturday", "start": "2023-05-06T00:00:00Z", "end": "2023-05-07T00:00:00Z", "period": "day"}]
    memory.update(stored["id"], "Mel: I went camping yesterday")
    assert memory.get(stored["id"])["times"][0]["start"] == "2023-05-07T00:00:00Z"  # re-resolved against when it was said


@needs_dates
def test_a_question_about_a_month_finds_what_was_said_about_it_in_other_words(memory, uid):
    memory.add("Mel: We went camping last Saturday", user_id=uid, infer=False, timestamp="2022-11-14T10:00:00Z")
    for i in range(30):  # other camping talk, with no time in it, said later
        memory.add(f"Mel: camping gear note {i}: we went camping with tents", user_id=uid, infer=False, timestamp="2023-05-08T10:00:00Z")
    question = "Where did Mel go camping in November 2022?"
    hit = memory.search(question, user_id=uid, limit=3)["results"]
    assert hit[0]["memory"] == "Mel: We went camping last Saturday"
    assert hit[0]["scores"]["time"] == 1.0
    no_time = SearchPreset("no-time", {k: v for k, v in HYBRID.weights.items() if k != "time"}, context=HYBRID.context, neighbours=1)
    assert hit[0]["memory"] != memory.search(question, user_id=uid, limit=1, preset=no_time)["results"][0]["memory"]


@needs_dates
def test_a_when_question_prefers_the_message_that_says_when(memory, uid):
    memory.add("Mel: The pottery class was fun", user_id=uid, infer=False, timestamp=MAY_8)
    memory.add("Mel: I signed up for a pottery class yesterday", user_id=uid, infer=False, timestamp=MAY_8)
    memory.add("Mel: my pottery class pottery bowls", user_id=uid, infer=False, timestamp=MAY_8)
    ranked = memory.search("When did Mel sign up for the pottery class?", user_id=uid, limit=3)["results"]
    assert ranked[0]["memory"] == "Mel: I signed up for a pottery class yesterday"
    assert ranked[0]["scores"]["time"] == 1.0 and all(r["scores"]["time"] == 0.0 for r in ranked[1:])


def test_a_run_read_brings_neighbours_from_that_run_only(memory, store, uid):
    # two runs of one user, interleaved in time: a user + run read sees that run only, context included
    memory.add("Jon: How did you two meet, Gina?", user_id=uid, run_id="r1", infer=False, timestamp="2023-05-08T10:00:00Z")
    memory.add("Gina: Secret from the other run.", user_id=uid, run_id="r2", infer=False, timestamp="2023-05-08T10:01:00Z")
    memory.add("Gina: At yoga in the park.", user_id=uid, run_id="r1", infer=False, timestamp="2023-05-08T10:02:00Z")
    (hit,) = [m for m in memory.get_all(user_id=uid, run_id="r1")["results"] if "meet" in m["memory"]]
    found = store.memory_context(Scope(user_id=uid, run_id="r1"), ContextQuery(HashingEmbedder(TEST_DIMS).embed_one("x"), [hit["id"]], 1, 1))
    assert [(n.offset, n.item.text) for n in found.neighbours] == [(1, "Gina: At yoga in the park.")]
    results = memory.search("How did Gina and Jon meet?", user_id=uid, run_id="r1", limit=5, preset="hybrid_context")["results"]
    seen = _texts(results) + [c["memory"] for r in results for c in r.get("context", [])]
    assert "Gina: Secret from the other run." not in seen and "Gina: At yoga in the park." in seen
