"""search(hops=2): relations beyond the seeds' first hop, with the time filter on every relation of
the path and the path in the result; on every store."""

from __future__ import annotations

import pytest
from conftest import TEST_DIMS
from helpers import graph, make_memory, script

from graphmem.errors import InvalidInputError


@pytest.fixture
def memory(server, store):
    return make_memory(server, store, TEST_DIMS)


def _sister_story(memory, server, uid):
    script(server, graph([("Jesica", "person")], [("I", "has_sister", "Jesica")]))
    memory.add("My sister is Jesica.", user_id=uid, timestamp="2024-01-10")
    script(server, graph([("Jesica", "person"), ("Rex", "pet")], [("Jesica", "has_dog", "Rex")]))
    memory.add("Jesica has a dog called Rex.", user_id=uid, timestamp="2024-02-10")
    script(server, graph([("Jesica", "person"), ("Lyon", "city")], [("Jesica", "lives_in", "Lyon")]))
    memory.add("Jesica lives in Lyon.", user_id=uid, timestamp="2024-03-10")


def _rels(result):
    return [(r["source"], r["relationship"], r["destination"]) for r in result["relations"]]


def test_my_sisters_dog_is_found_through_the_sister(memory, server, uid):
    _sister_story(memory, server, uid)
    question = "what is the name of my sister's dog?"
    one_hop = memory.search(question, user_id=uid)
    assert ("Jesica", "HAS_DOG", "Rex") not in _rels(one_hop)  # only the user's own relations are one hop away
    two_hops = memory.search(question, user_id=uid, hops=2)
    # the whole path leads (its words "sister", "dog"; the path signal lifts both hops): the answer and the hop to it
    assert set(_rels(two_hops)[:2]) == {("Jesica", "HAS_DOG", "Rex"), (uid, "HAS_SISTER", "Jesica")}
    dog = next(r for r in two_hops["relations"] if r["relationship"] == "HAS_DOG")
    assert dog["hops"] == 2
    assert dog["path"] == [
        {"source": uid, "relationship": "HAS_SISTER", "destination": "Jesica"},
        {"source": "Jesica", "relationship": "HAS_DOG", "destination": "Rex"},
    ]
    sister = next(r for r in two_hops["relations"] if r["relationship"] == "HAS_SISTER")
    assert "path" not in sister  # one hop: no path
    assert dog["scores"]["seed"] == pytest.approx(0.5)  # the user's seed score, decayed once


def test_the_time_filter_applies_to_every_relation_of_the_path(memory, server, uid):
    _sister_story(memory, server, uid)
    question = "what is the name of my sister's dog?"
    before_dog = memory.search(question, user_id=uid, hops=2, as_of="2024-01-20")
    assert _rels(before_dog) == [(uid, "HAS_SISTER", "Jesica")]  # the dog relation did not exist yet
    before_sister = memory.search(question, user_id=uid, hops=2, as_of="2023-12-01")
    assert _rels(before_sister) == []  # no sister yet, so no path to her dog either


def test_hops_must_be_one_or_two(memory, uid):
    for bad in (0, 3, True, "2"):
        with pytest.raises(InvalidInputError):
            memory.search("x", user_id=uid, hops=bad)
