"""Relation ranking by meaning (retrieval.graph): the fact cosine leads, a first-person question ranks
the user's own relations by meaning rather than by their count, kinds are spread in the head, the
path signal lifts both hops of a matching two-hop path, and the relation-only preset settings are
checked. Unit tests on ranked candidates, then through Memory.search on every store with MiniLM."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from conftest import TEST_DIMS
from helpers import graph, llm_config, make_memory, script

from graphmem import Memory
from graphmem.errors import InvalidInputError
from graphmem.retrieval import HYBRID, SearchPreset
from graphmem.retrieval import graph as graph_ranking
from graphmem.retrieval.graph import joined_seeds, path_scores, rank_relations, spread
from graphmem.types import Relation

MINILM = Path(__file__).resolve().parents[1].parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
if not MINILM.is_dir():
    MINILM = Path(__file__).resolve().parents[3] / "shared" / "models" / "all-MiniLM-L6-v2-onnx"


def _rel(rid: str, source: str, rel: str, dest: str, vector: float = 0.0, seed: float = 0.0, hops: int = 1,
         path: list[tuple[str, str, str]] | None = None) -> Relation:
    r = Relation(rid, f"id-{source}", source, rel, f"id-{dest}", dest, scores={"vector": vector, "seed": seed, "fulltext": 0.0})
    if path:
        r.hops, r.path = hops, [{"source": s, "relationship": t, "destination": d} for s, t, d in path]
    return r


def test_the_spread_orders_the_users_own_relations_by_meaning_whatever_their_count():
    # the spread is a preset setting (relation_spread), off in the default (not chosen leave one dataset out)
    spreading = replace(HYBRID, relation_spread=0.15)
    knows = [_rel(f"k{i}", "alice", "KNOWS", f"Person {i}", vector=0.30 if i == 0 else 0.29, seed=1.0) for i in range(20)]
    pet = _rel("pet", "alice", "HAS_PET", "Rex", vector=0.28, seed=1.0)
    jazz = _rel("jazz", "alice", "LIKES", "jazz", vector=0.05, seed=1.0)  # the far end of the candidates' cosines
    knows.append(jazz)
    ranked = rank_relations([*knows, pet], "any furry companion waiting for me at home?", spreading, 5)
    assert "pet" in [r.id for r in ranked]  # one KNOWS leads (best cosine), the others are spread below the pet
    assert ranked[0].relationship == "KNOWS" and ranked[1].id == "pet"
    assert ranked[1].scores["vector"] == pytest.approx(0.28) and "bm25" in ranked[1].scores
    without = rank_relations([*knows, pet], "any furry companion waiting for me at home?", replace(HYBRID, relation_spread=0.0), 5)
    assert "pet" not in [r.id for r in without]  # what the spread changes


def test_spread_keeps_a_kinds_order_and_scores_falling():
    rels = [_rel("a1", "u", "KNOWS", "A", 0.9), _rel("a2", "u", "KNOWS", "B", 0.8), _rel("p", "u", "HAS_PET", "Rex", 0.7)]
    for r, s in zip(rels, (1.0, 0.9, 0.8), strict=True):
        r.score = s
    out = spread(rels, 0.35)
    assert [r.id for r in out] == ["a1", "p", "a2"]
    assert out[2].score == pytest.approx(0.9 * 0.65) and out[2].scores["fused"] == pytest.approx(0.9)
    assert [r.score for r in out] == sorted((r.score for r in out), reverse=True)
    assert [r.id for r in spread(rels, 0.0)] == ["a1", "a2", "p"]


def test_the_path_signal_lifts_both_hops_of_the_matching_path():
    works = _rel("w", "Kenji", "WORKS_AT", "Globex", vector=0.55, seed=1.0)
    pet = _rel("p", "Kenji", "HAS_PET", "Tiger", vector=0.10, seed=1.0)
    based = _rel("b", "Globex", "BASED_IN", "Boston", vector=0.35, seed=0.5, hops=2,
                 path=[("Kenji", "WORKS_AT", "Globex"), ("Globex", "BASED_IN", "Boston")])
    vet = _rel("v", "Tiger", "SEES_VET", "Dr. Who", vector=0.05, seed=0.5, hops=2,
               path=[("Kenji", "HAS_PET", "Tiger"), ("Tiger", "SEES_VET", "Dr. Who")])
    scores = dict(zip("wpbv", path_scores([works, pet, based, vet]), strict=True))
    assert scores == {"w": pytest.approx(0.55), "p": pytest.approx(0.10), "b": pytest.approx(0.55), "v": pytest.approx(0.10)}
    ranked = rank_relations([works, pet, based, vet], "where is the head office of the firm Kenji works for?", HYBRID, 4)
    assert [r.id for r in ranked][:2] == ["w", "b"]
    assert ranked[1].scores["path"] == pytest.approx(0.55)


def test_relation_only_preset_settings_are_checked():
    with pytest.raises(InvalidInputError, match="relation_weights"):
        SearchPreset("x", {"vector": 1.0}, relation_weights={"meaning": 1.0})
    with pytest.raises(InvalidInputError, match="relation_weights"):
        SearchPreset("x", {"vector": 1.0}, relation_weights={})
    with pytest.raises(InvalidInputError, match="relation_spread"):
        SearchPreset("x", {"vector": 1.0}, relation_spread=1.0)
    assert SearchPreset("x", {"vector": 1.0}, relation_weights={"path": 1.0}).relation_weights == {"path": 1.0}


@pytest.fixture
def minilm():
    if not MINILM.is_dir():
        pytest.fail(f"the MiniLM model is missing at {MINILM}")
    from graphmem.embeddings import OnnxEmbedder

    return OnnxEmbedder(MINILM)


def test_do_i_have_a_dog_finds_the_pet_among_the_users_many_relations(server, store, minilm, tmp_path):
    # a fixed user id (the scope is emptied first): facts once held it, and about 3% of random ids moved
    # "has pet Rex" closer than "lives in Porto" to the home question with MiniLM; the first-person
    # wording no longer depends on the id
    user = "u-ranking-dog"
    memory = Memory({"llm": llm_config(server), "history_db_path": str(tmp_path / "h.db")}, store=store, embedder=minilm)
    try:
        memory.delete_all(user_id=user)
        friends = [(f"Friend {n}", "person") for n in "ABCDEFGH"]
        script(server, graph([*friends, ("Rex", "dog"), ("Porto", "city")],
                             [*(("I", "knows", f) for f, _ in friends), ("I", "has_pet", "Rex"), ("I", "lives_in", "Porto")]))
        server.enqueue("extract_facts", {"facts": []})
        memory.add("Catching up on my people, my dog Rex and my town.", user_id=user)
        found = memory.search("do I have a dog?", user_id=user, limit=3)["relations"]
        assert found[0]["destination"] == "Rex", found
        assert found[0]["fact"] == "I myself have pet Rex (dog)"
        assert found[0]["scores"]["vector"] > max(r["scores"]["vector"] for r in found[1:])
        home = memory.search("what place do I call home?", user_id=user, limit=3)["relations"]
        assert home[0]["destination"] == "Porto", home
    finally:
        memory.close()


def test_a_relation_between_two_ends_the_question_names_is_seeded_more():
    sister = _rel("sister", "alice", "HAS_SISTER", "Mei", vector=0.30, seed=1.0)
    hers = [_rel(f"m{i}", "Mei", rel, dest, vector=0.45, seed=1.0)
            for i, (rel, dest) in enumerate((("LIVES_IN", "Leeds"), ("WORKS_AT", "Umbrella Labs"), ("STUDIED_AT", "McGill")))]
    knows = _rel("knows", "alice", "KNOWS", "Bo", vector=0.40, seed=1.0)
    candidates = [*hers, knows, sister]
    seeds = joined_seeds(candidates, [1.0] * 5, "who is Mei to me?", "alice")
    assert seeds == [1.0, 1.0, 1.0, 1.0, graph_ranking.JOINED_SEEDS]  # the user (first person) and Mei (named)
    # a preset that weighs the seed (the default no longer does: the leave-one-dataset-out report
    # dropped its weight, docs/benchmarks.md "Generalisation"; the seeds still gather the candidates)
    seeded = replace(HYBRID, relation_weights={"vector": 1.0, "seed": 1.0})
    assert rank_relations(candidates, "who is Mei to me?", seeded, 3, "alice")[0].id == "sister"
    assert rank_relations(candidates, "who is Mei to me?", seeded, 3)[0].id != "sister"  # the user's node unknown: no join
    # not first person: the user's node is not named; names are whole words of the question
    assert joined_seeds(candidates, [1.0] * 5, "who is Mei?", "alice") == [1.0] * 5
    assert joined_seeds([_rel("x", "Mei", "LIVES_IN", "Leeds", seed=0.5)], [0.5], "does Mei live in Leeds?", "alice") == [0.5 * graph_ranking.JOINED_SEEDS]
    assert joined_seeds([_rel("x", "Mei", "LIVES_IN", "Leeds", seed=0.5)], [0.5], "does Meiling live in Leeds?", "alice") == [0.5]
    assert joined_seeds([_rel("x", "Mei", "LIVES_IN", "Leeds")], [0.0], "does Mei live in Leeds?", "alice") == [0.0]  # no seed, nothing to multiply


def test_first_person_questions_find_the_users_own_relation_by_meaning_and_by_the_name_they_say(server, store, minilm, tmp_path):
    """The user's own relations are embedded without the other end's name (schema.facts.fact_meaning),
    and a question naming that end ranks the relation between the user and it first."""
    user = "u-ranking-sister"
    memory = Memory({"llm": llm_config(server), "history_db_path": str(tmp_path / "h.db")}, store=store, embedder=minilm)
    try:
        memory.delete_all(user_id=user)
        entities = [("Mei", "person"), ("Leeds", "city"), ("Umbrella Labs", "company"), ("McGill", "university"),
                    ("Shadow", "cat"), ("Porto", "city"), ("Initech", "company")]
        relations = [("I", "has_sister", "Mei"), ("Mei", "lives_in", "Leeds"), ("Mei", "works_at", "Umbrella Labs"),
                     ("Mei", "studied_at", "McGill"), ("I", "has_pet", "Shadow"), ("I", "lives_in", "Porto"), ("I", "works_at", "Initech")]
        script(server, graph(entities, relations))
        server.enqueue("extract_facts", {"facts": []})
        memory.add("My sister Mei, her life in Leeds, my cat Shadow, Porto and my job.", user_id=user)
        # the relation between the user and the person named: a preset weighing the (joined) seed; the
        # default no longer does (docs/benchmarks.md, "Generalisation": no fold chose a seed weight)
        seeded = replace(HYBRID, relation_weights={"vector": 1.0, "bm25": 1.0, "seed": 1.0})
        top = memory.search("who is Mei to me?", user_id=user, limit=3, preset=seeded)["relations"]
        assert (top[0]["relationship"], top[0]["destination"]) == ("HAS_SISTER", "Mei"), top
        assert top[0]["fact"] == "I myself have sister Mei (person)"  # what the user reads keeps the name
        pet = memory.search("what animal lives with me?", user_id=user, limit=1)["relations"]
        assert pet[0]["destination"] == "Shadow", pet
    finally:
        memory.close()


def test_a_function_word_of_the_question_matches_no_name_on_any_store(server, store, uid):
    # "the" in the question used to match every name holding it ("the book fair": fulltext 0.33 on
    # the embedded store, 0.81 on Neo4j), so the stores ranked such questions differently
    memory = make_memory(server, store, TEST_DIMS)
    try:
        script(server, graph([("the book fair", "event"), ("The Daily", "podcast"), ("volleyball", "sport")],
                             [("I", "attended", "the book fair"), ("I", "follows", "The Daily"), ("I", "practices", "volleyball")]))
        server.enqueue("extract_facts", {"facts": []})
        memory.add("I went to the book fair, I follow The Daily and I play volleyball", user_id=uid)
        found = memory.search("what do I do at the club on Saturdays?", user_id=uid)["relations"]
        assert {r["destination"] for r in found} == {"the book fair", "The Daily", "volleyball"}  # the user's own, seeded
        assert all(r["scores"]["fulltext"] == 0 for r in found), found
        named = memory.search("how was the book fair?", user_id=uid)["relations"]
        assert named[0]["destination"] == "the book fair" and named[0]["scores"]["fulltext"] > 0
    finally:
        memory.close()


def test_the_lean_bm25_scores_as_the_full_one():
    from graphmem.retrieval.graph import bm25
    from graphmem.retrieval.text import BM25

    texts = ["alice has pet Rex (dog)", "alice lives in Porto (city)", "Rex (dog) sees vet Dr. Who", "alice knows Bob", ""]
    for query in ("does my dog Rex see a vet?", "where do I live?", "nothing matches here", ""):
        assert bm25(texts, query) == pytest.approx(BM25(texts).scores(query))
