"""Temporal scenarios on every store: event time (as_of), transaction time (known_at), timelines."""

from __future__ import annotations

import time
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from conftest import TEST_DIMS
from helpers import graph, make_memory, script

from graphmem.types import utcnow


@pytest.fixture
def memory(server, store, tmp_path):
    return make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "h.db"))


def lives(memory, uid, **when) -> set[str]:
    found = memory.search("where do I live?", user_id=uid, **when)["relations"]
    return {r["destination"] for r in found if r["relationship"] == "LIVES_IN"}


def add_boston(memory, server, uid, said="2023-03-01T12:00:00Z", deletions=None):
    script(server, graph([("Boston", "place")], [("I", "lives_in", "Boston")], deletions=deletions))
    memory.add("I live in Boston", user_id=uid, timestamp=said)


def add_denver(memory, server, uid, deletions=None):
    script(server, graph([("Denver", "place")], [("I", "lives_in", "Denver", "2024-05-15")], deletions=deletions))
    memory.add("I moved to Denver last month", user_id=uid, timestamp="2024-06-15T09:00:00Z")


def intervals(memory, uid, entity="I") -> list[tuple[str, str | None, str | None]]:
    return [(r["destination"], r["valid_at"], r["invalid_at"]) for r in memory.timeline(entity, user_id=uid)["relations"] if r["relationship"] == "LIVES_IN"]


def test_moves_boston_then_denver(memory, server, uid):
    add_boston(memory, server, uid)
    add_denver(memory, server, uid, deletions=[(uid, "lives_in", "Boston")])
    assert lives(memory, uid, as_of="2023-12-01") == {"Boston"}
    assert lives(memory, uid) == {"Denver"}
    assert lives(memory, uid, as_of="2023-01-01") == set()
    (boston,) = [r for r in memory.get_all(user_id=uid, include_invalidated=True)["relations"] if r["destination"] == "Boston"]
    assert boston["valid_at"].startswith("2023-03-01") and boston["invalid_at"].startswith("2024-05")
    assert boston["expired_at"] is not None and boston["created_at"] is not None


def test_job_start_given_in_words(memory, server, uid):
    script(server, graph([("Acme", "organization")], [("I", "works_at", "Acme", "2021-03-01")]))
    memory.add("I joined Acme in March 2021", user_id=uid, timestamp="2024-01-10")
    found = lambda t: {r["destination"] for r in memory.search("where do I work?", user_id=uid, as_of=t)["relations"]}  # noqa: E731
    assert found("2021-06-01") == {"Acme"}
    assert found("2020-12-01") == set()
    assert memory.timeline("Acme", user_id=uid)["relations"][0]["valid_at"].startswith("2021-03-01")


def test_out_of_order_ingestion_ends_in_the_same_state(memory, server):
    in_order, reversed_ = f"a-{uuid.uuid4().hex[:6]}", f"b-{uuid.uuid4().hex[:6]}"
    add_boston(memory, server, in_order)
    add_denver(memory, server, in_order, deletions=[(in_order, "lives_in", "Boston")])
    add_denver(memory, server, reversed_)
    # the model says the late Boston message contradicts Denver; the dates say Boston is the past
    add_boston(memory, server, reversed_, deletions=[(reversed_, "lives_in", "Denver")])
    assert sorted(intervals(memory, in_order)) == sorted(intervals(memory, reversed_))
    assert sorted(intervals(memory, reversed_)) == [
        ("Boston", "2023-03-01T12:00:00Z", "2024-05-15T00:00:00Z"),
        ("Denver", "2024-05-15T00:00:00Z", None),
    ]
    for user in (in_order, reversed_):
        assert lives(memory, user) == {"Denver"} and lives(memory, user, as_of="2023-06-01") == {"Boston"}


def test_a_fact_that_becomes_true_again_is_a_new_interval(memory, server, uid):
    add_boston(memory, server, uid)
    add_denver(memory, server, uid, deletions=[(uid, "lives_in", "Boston")])
    script(server, graph([("Boston", "place")], [("I", "lives_in", "Boston")], deletions=[(uid, "lives_in", "Denver")]))
    memory.add("I moved back to Boston", user_id=uid, timestamp="2025-02-01T00:00:00Z")
    boston = [i for i in intervals(memory, uid, "Boston")]
    assert boston == [
        ("Boston", "2023-03-01T12:00:00Z", "2024-05-15T00:00:00Z"),
        ("Boston", "2025-02-01T00:00:00Z", None),
    ]
    assert lives(memory, uid) == {"Boston"} and lives(memory, uid, as_of="2024-12-01") == {"Denver"}
    times = [r["valid_at"] for r in memory.timeline("me", user_id=uid)["relations"]]
    assert times == sorted(times) and len(times) == 3


def test_known_at_answers_what_graphmem_believed(memory, server, uid):
    add_boston(memory, server, uid)
    time.sleep(0.01)
    between = utcnow()
    time.sleep(0.01)
    add_denver(memory, server, uid, deletions=[(uid, "lives_in", "Boston")])
    assert lives(memory, uid, known_at=between) == {"Boston"}
    assert lives(memory, uid) == {"Denver"}
    assert lives(memory, uid, known_at=between - timedelta(days=1)) == set()


def test_multi_valued_relations_never_retire_each_other_by_time(memory, server, uid):
    script(server, graph([("pizza", "food")], [("I", "likes", "pizza")]))
    memory.add("I like pizza", user_id=uid, timestamp="2023-01-01")
    script(server, graph([("burgers", "food")], [("I", "likes", "burgers")], deletions=[]))
    memory.add("I also like burgers", user_id=uid, timestamp="2024-01-01")
    likes = lambda **w: {r["destination"] for r in memory.search("what do I like?", user_id=uid, **w)["relations"]}  # noqa: E731
    assert likes() == {"pizza", "burgers"}
    assert likes(as_of="2023-06-01") == {"pizza"}


def test_bad_dates_from_the_model_follow_the_documented_rules(memory, server, uid):
    script(server, graph(
        [("Oslo", "place"), ("Rome", "place"), ("Lima", "place")],
        [("I", "visited", "Oslo", "2024-13-45"), ("I", "loves", "Rome", "soon"), ("I", "likes", "Lima", "2024-05-01", "2023-01-01")],
    ))
    memory.add("trips", user_id=uid, timestamp="2024-06-01T00:00:00Z")
    rels = {r["destination"]: r for r in memory.get_all(user_id=uid)["relations"]}
    assert rels["Oslo"]["valid_at"] == rels["Rome"]["valid_at"] == "2024-06-01T00:00:00Z"  # unknown -> reference time
    assert rels["Lima"]["valid_at"] == "2024-05-01T00:00:00Z" and rels["Lima"]["invalid_at"] is None  # end before start dropped


def test_timestamps_with_and_without_zones_and_in_the_future(memory, server, uid):
    script(server, graph([("Paris", "place")], [("I", "lives_in", "Paris")]))
    memory.add("I live in Paris", user_id=uid, timestamp="2024-01-01T10:00:00+02:00")
    script(server, graph([("Kyoto", "place")], [("I", "visited", "Kyoto")]))
    memory.add("I visited Kyoto", user_id=uid, timestamp=datetime(2024, 1, 1, 10, 0))  # naive = UTC
    future = utcnow() + timedelta(days=365)
    script(server, graph([("Mars", "place")], [("I", "wants_to_visit", "Mars")]))
    memory.add("I want to visit Mars", user_id=uid, timestamp=future)  # clamped to now
    rels = {r["destination"]: r for r in memory.get_all(user_id=uid)["relations"]}
    assert rels["Paris"]["valid_at"] == "2024-01-01T08:00:00Z"
    assert rels["Kyoto"]["valid_at"] == "2024-01-01T10:00:00Z"
    assert datetime.fromisoformat(rels["Mars"]["valid_at"].replace("Z", "+00:00")) <= utcnow()


def test_a_planned_fact_is_current_only_from_its_start(memory, server, uid):
    start = (utcnow() + timedelta(days=30)).date().isoformat()
    script(server, graph([("Lisbon", "place")], [("I", "lives_in", "Lisbon", start)]))
    memory.add("I'm moving to Lisbon next month", user_id=uid)
    assert lives(memory, uid) == set()
    assert lives(memory, uid, as_of=datetime.now(timezone.utc) + timedelta(days=60)) == {"Lisbon"}
    assert [i[0] for i in intervals(memory, uid)] == ["Lisbon"]
