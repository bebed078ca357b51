"""Relation facts and provenance through ``Memory.add`` on every store: scripted LLM over HTTP, real
stores, the hashing embedder (a text's embedding is its own: a query equal to a fact has cosine 1)."""

from __future__ import annotations

import pytest
from conftest import TEST_DIMS
from helpers import graph, make_memory, script

from graphmem.retrieval import HYBRID
from graphmem.retrieval.hubness import query_vectors


@pytest.fixture(params=["staged", "single_pass"])
def memory(request, server, store):
    return make_memory(server, store, TEST_DIMS, add_mode=request.param)


def test_an_add_writes_each_relation_with_its_fact_in_its_one_embedding_request(memory, server, uid):
    script(server, graph([("Rex", "dog")], [("I", "has_pet", "Rex")]))
    added = memory.add("I have a dog called Rex", user_id=uid)
    usage = added["usage"]
    (rel,) = memory.get_all(user_id=uid)["relations"]
    assert rel["fact"] == "I myself have pet Rex (dog)" and added["relations"][0]["fact"] == rel["fact"]
    requests = usage["embedding_requests"]
    assert requests == (1 if memory.config.add_mode == "staged" else 2)  # single_pass embeds the messages first
    # what is embedded is the fact as it reads (schema.facts.fact_meaning, NAME_LEFT_OUT off)
    meaning = "I myself have pet Rex (dog)"
    found = memory.search(meaning, user_id=uid)["relations"]
    # the fact's cosine (1: the question is the embedded text) less its hubness (retrieval.hubness)
    fact, centre = memory.embedder.embed([meaning])[0], query_vectors(memory.embedder, "")[1]
    hubness = sum(f * c for f, c in zip(fact, centre, strict=True)) - memory.embedder.query_floor
    assert found[0]["fact"] == rel["fact"]
    assert found[0]["scores"]["vector"] == pytest.approx(1.0 - HYBRID.relation_hubness * hubness, abs=1e-3)


def test_a_stated_time_is_part_of_the_fact(memory, server, uid):
    script(server, graph([("Porto", "city")], [("I", "lives_in", "Porto", "2019-03-01T00:00:00Z")]))
    memory.add("I have lived in Porto since March 2019", user_id=uid)
    (rel,) = memory.get_all(user_id=uid)["relations"]
    assert rel["fact"] == "I myself live in Porto (city) (since 1 March 2019)"


def test_provenance_names_the_add_that_created_and_the_one_that_retired(memory, server, uid):
    script(server, graph([("Boston", "city")], [("I", "lives_in", "Boston")]))
    memory.add("I live in Boston", user_id=uid)
    (boston,) = memory.get_all(user_id=uid)["relations"]
    script(server, graph([("Denver", "city")], [("I", "lives_in", "Denver")], deletions=[(uid, "LIVES_IN", "Boston")]))
    memory.add("I moved to Denver", user_id=uid)
    versions = {r["destination"]: r for r in memory.get_all(user_id=uid, include_invalidated=True)["relations"]}
    created, moved = boston["provenance"]["added_by"], versions["Denver"]["provenance"]["added_by"]
    assert len(created) == 1 and len(moved) == 1 and created != moved
    assert versions["Boston"]["provenance"] == {"added_by": created, "retired_by": moved[0]}
    assert versions["Denver"]["provenance"]["retired_by"] is None
    found = memory.search("where do I live", user_id=uid)["relations"]
    assert [r["provenance"] for r in found if r["destination"] == "Denver"] == [{"added_by": moved, "retired_by": None}]


def test_forgetting_an_entity_takes_its_relations_and_every_fact_naming_it(memory, server, uid):
    script(server, graph([("Ana", "person"), ("Porto", "city")], [("I", "has_sister", "Ana"), ("Ana", "lives_in", "Porto")]))
    memory.add("My sister Ana lives in Porto", user_id=uid)
    script(server, graph([("Rex", "dog")], [("I", "has_pet", "Rex")]))
    memory.add("I have a dog called Rex", user_id=uid)
    scope = memory.store.scopes()
    assert any(s.user_id == uid for s in scope)
    facts = {r["fact"] for r in memory.get_all(user_id=uid)["relations"]}
    assert facts == {"I myself have sister Ana (person)", "Ana (person) lives in Porto (city)", "I myself have pet Rex (dog)"}
    memory.forget_entity("Ana", user_id=uid)
    assert {r["fact"] for r in memory.get_all(user_id=uid, include_invalidated=True)["relations"]} == {"I myself have pet Rex (dog)"}
    for fact in facts - {"I myself have pet Rex (dog)"}:  # no search reaches an erased fact, by meaning or otherwise
        assert all("Ana" not in (r.get("fact") or "") for r in memory.search(fact, user_id=uid)["relations"])
