"""The graph pipeline end to end on every store: scripted LLM over HTTP, real stores."""

from __future__ import annotations

import uuid

import networkx as nx
import pytest
from conftest import TEST_DIMS
from helpers import graph, lock_round_trips, make_memory, script, triples

from graphmem.types import Scope


@pytest.fixture
def memory(server, store):
    return make_memory(server, store, TEST_DIMS)


def test_desmond_story_builds_a_connected_graph_without_duplicates(memory, server, uid):
    story = [
        ("Hi, my name is Desmond.", graph([("Desmond", "person")], [("I", "has_name", "Desmond")])),
        ("I have a sister.", graph([("sister", "person")], [("my", "has_sister", "sister")])),
        ("Her name is Jesica.", graph([("Sister", "person"), ("Jesica", "person")], [("sister", "has_name", "Jesica")])),
        ("She has a dog.", graph([("JESICA", "person"), ("dog", "pet")], [("jesica", "has_pet", "dog")])),
    ]
    for text, replies in story:
        script(server, replies)
        memory.add(text, user_id=uid)
    got = triples(memory.get_all(user_id=uid))
    assert got == {
        (uid, "HAS_NAME", "Desmond"),
        (uid, "HAS_SISTER", "sister"),
        ("sister", "HAS_NAME", "Jesica"),
        ("Jesica", "HAS_PET", "dog"),
    }
    names = [e.name for e in memory.store.entities(Scope.of(user_id=uid))]
    assert sorted(n.casefold() for n in names) == sorted({n.casefold() for n in names})  # no twins
    g = nx.Graph()
    g.add_edges_from((s, d) for s, _, d in got)
    assert nx.is_connected(g) and uid in g


def test_badminton_is_invalidated_but_kept_as_history(memory, server, uid):
    script(server, graph([("badminton", "activity")], [("I", "loves_playing", "badminton")]))
    memory.add("I love to play badminton", user_id=uid)
    script(server, graph([("badminton", "activity")], [], deletions=[(uid, "LOVES_PLAYING", "badminton")]))
    memory.add("I do not like badminton any more", user_id=uid)

    assert server.calls("delete_graph_memory") == 1
    assert memory.get_all(user_id=uid)["relations"] == []
    history = memory.get_all(user_id=uid, include_invalidated=True)["relations"]
    assert len(history) == 1 and history[0]["invalid_at"] and history[0]["expired_at"]
    assert memory.search("what do I play? badminton", user_id=uid)["relations"] == []


def test_multi_valued_relations_are_not_invalidated(memory, server, uid):
    script(server, graph([("pizza", "food")], [("I", "likes", "pizza")]))
    memory.add("I like pizza", user_id=uid)
    script(server, graph([("burgers", "food")], [("I", "likes", "burgers")], deletions=[]))
    memory.add("I also like burgers", user_id=uid)
    assert server.calls("delete_graph_memory") == 1  # existing relations were shown to the model
    assert triples(memory.get_all(user_id=uid)) == {(uid, "LIKES", "pizza"), (uid, "LIKES", "burgers")}


def test_reasserting_a_relation_merges_mentions(memory, server, uid):
    for _ in range(2):
        script(server, graph([("tennis", "activity")], [("I", "plays", "tennis")], deletions=[]))
        memory.add("I play tennis", user_id=uid)
    rels = memory.get_all(user_id=uid)["relations"]
    assert len(rels) == 1 and rels[0]["mentions"] == 2


def test_two_users_never_see_each_other(memory, server):
    a, b = f"a-{uuid.uuid4().hex[:6]}", f"b-{uuid.uuid4().hex[:6]}"
    for user in (a, b):
        script(server, graph([("Paris", "place")], [("I", "lives_in", "Paris")], deletions=[]))
        memory.add("I live in Paris", user_id=user)
    assert triples(memory.get_all(user_id=a)) == {(a, "LIVES_IN", "Paris")}
    assert triples(memory.get_all(user_id=b)) == {(b, "LIVES_IN", "Paris")}
    assert {r["source"] for r in memory.search("where do I live? Paris", user_id=a)["relations"]} == {a}
    memory.delete_all(user_id=a)
    assert memory.get_all(user_id=a)["relations"] == []
    assert triples(memory.get_all(user_id=b)) == {(b, "LIVES_IN", "Paris")}


def test_a_run_is_seen_by_its_users_reads_and_not_by_other_runs(memory, server):
    user = f"u-{uuid.uuid4().hex[:6]}"
    script(server, graph([("tea", "food")], [("I", "likes", "tea")]))
    memory.add("I like tea", user_id=user, run_id="r1")
    assert triples(memory.get_all(user_id=user)) == {(user, "LIKES", "tea")}
    assert triples(memory.get_all(user_id=user, run_id="r1")) == {(user, "LIKES", "tea")}
    assert memory.get_all(user_id=user, run_id="r2")["relations"] == []


def test_search_makes_no_llm_call_one_embedding_and_few_round_trips(memory, server, uid):
    script(server, graph([("Denver", "place"), ("Acme", "organization")], [("I", "lives_in", "Denver"), ("I", "works_at", "Acme")]))
    memory.add("I live in Denver and work at Acme", user_id=uid)
    llm_before, emb_before, rt_before = server.calls(), memory.embedder.calls, memory.store.round_trips
    hits = memory.search("where do I live?", user_id=uid)["relations"]
    assert server.calls() == llm_before
    assert memory.embedder.calls - emb_before == 1
    assert memory.store.round_trips - rt_before <= 3
    assert hits and hits[0]["destination"] == "Denver"
    assert {"vector", "bm25", "fulltext", "seed"} <= set(hits[0]["scores"])


def test_add_cost_is_constant_in_the_number_of_triples(memory, server):
    costs = []
    for n in (1, 20):
        uid = f"u-{uuid.uuid4().hex[:8]}"
        names = [(f"thing{i}", "object") for i in range(n)]
        script(server, graph(names, [("I", "owns", name) for name, _ in names]))
        llm, emb, rt = server.calls(), memory.embedder.calls, memory.store.round_trips
        memory.add("I own many things", user_id=uid)
        costs.append((server.calls() - llm, memory.embedder.calls - emb, memory.store.round_trips - rt))
        assert len(memory.get_all(user_id=uid)["relations"]) == n
    # 2 LLM calls (graph extraction + facts, nothing similar exists), 1 embedding batch,
    # 3 round trips (conversation log read, entity match, write), + the scope lock on Neo4j
    assert costs[0] == costs[1] == (2, 1, 3 + lock_round_trips(memory.store))
