"""The store contract's relation facts and provenance (graphmem/stores/base.py), on every store.

A relation version carries ``fact`` (its triple in words) and a fact embedding; search finds
relations by that meaning even when no entity is seeded, and scores each candidate's "vector" as
the cosine of the query and its own fact. Fact embeddings here are axes no entity uses, so a query
on them seeds no entity: what is found is found by fact alone.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from graphmem.schema.filters import parse
from graphmem.stores.base import GraphStore, RelationFact
from graphmem.types import GraphWrite, Invalidation, RelationWrite, Scope, new_id, sanitize_relation_type
from tests.contract.test_store_contract import QUIET, T0, add, again, at, axis, entity, fresh_scope, ids, query, tilted

UTC = timezone.utc
F1, F2, F3 = 10, 11, 12  # fact axes


def frel(src, rel_type: str, dst, fact_axis: int | None, valid_at: datetime = T0, fact: str | None = None) -> RelationWrite:
    r = RelationWrite(src.id, sanitize_relation_type(rel_type), dst.id, valid_at)
    if fact_axis is not None:
        r.fact, r.fact_embedding = fact or f"{src.name} {rel_type} {dst.name}", axis(fact_axis)
    return r


@pytest.fixture
def pets(store: GraphStore, scope: Scope):
    """alice HAS_PET Rex (fact on F1), alice WORKS_AT Acme (fact on F2), Bob KNOWS Carl (no fact)."""
    alice, rex, acme = entity("alice", axis(0)), entity("Rex", axis(1), "dog"), entity("Acme", axis(2), "company")
    bob, carl = entity("Bob", axis(3)), entity("Carl", axis(4))
    add(store, scope, T0, [alice, rex, acme, bob, carl],
        [frel(alice, "has pet", rex, F1, fact="alice has pet Rex (dog)"), frel(alice, "works at", acme, F2),
         frel(bob, "knows", carl, None)])
    return alice, rex, acme, bob, carl


def test_facts_are_stored_and_read_back(store: GraphStore, scope: Scope, pets) -> None:
    facts = {r.relationship: r.fact for r in store.get_all(scope)}
    assert facts == {"HAS_PET": "alice has pet Rex (dog)", "WORKS_AT": "alice works at Acme", "KNOWS": None}


def test_search_finds_a_relation_by_its_fact_with_no_entity_seeded(store: GraphStore, scope: Scope, pets) -> None:
    found = store.search_graph(scope, query(axis(F1)))
    assert [r.relationship for r in found] == ["HAS_PET"]
    (hit,) = found
    assert hit.fact == "alice has pet Rex (dog)"
    assert hit.scores["vector"] == pytest.approx(1.0, abs=1e-3)
    assert hit.scores["seed"] == 0.0 and hit.scores["fulltext"] == 0.0


def test_fact_candidates_keep_to_top_k_and_threshold(store: GraphStore, scope: Scope, pets) -> None:
    near = tilted(F1, F2, 0.8)  # 0.8 to the pet's fact, 0.6 to the work's
    assert [r.relationship for r in store.search_graph(scope, query(near, fact_top_k=1))] == ["HAS_PET"]
    both = store.search_graph(scope, query(near, fact_top_k=5))
    assert [r.relationship for r in both] == ["HAS_PET", "WORKS_AT"]  # best first
    assert [round(r.scores["vector"], 3) for r in both] == [0.8, 0.6]
    assert store.search_graph(scope, query(near, fact_top_k=5, threshold=0.7)) != both
    assert store.search_graph(scope, query(near, fact_top_k=0)) == []


def test_seeded_relations_get_their_fact_cosine(store: GraphStore, scope: Scope, pets) -> None:
    found = {r.relationship: r for r in store.search_graph(scope, query(text="", seeds=["alice"], fact_top_k=0))}
    assert set(found) == {"HAS_PET", "WORKS_AT"}
    assert all(r.scores["seed"] == 1.0 and r.scores["vector"] == 0.0 for r in found.values())  # query on QUIET
    seeded = {r.relationship: r.scores for r in store.search_graph(scope, query(axis(F2), seeds=["alice"], fact_top_k=0))}
    assert seeded["WORKS_AT"]["vector"] == pytest.approx(1.0, abs=1e-3) and seeded["HAS_PET"]["vector"] == pytest.approx(0.0, abs=1e-3)


def test_fact_candidates_keep_the_time_filter_and_filters(store: GraphStore, scope: Scope) -> None:
    alice, paris, berlin = entity("alice", axis(0)), entity("Paris", axis(1)), entity("Berlin", axis(2))
    moved = datetime(2024, 5, 15, tzinfo=UTC)
    add(store, scope, datetime(2023, 3, 2, tzinfo=UTC), [alice, paris], [frel(alice, "lives in", paris, F1, datetime(2023, 3, 1, tzinfo=UTC))])
    (old,) = store.get_all(scope)
    add(store, scope, datetime(2024, 6, 1, tzinfo=UTC), [again(alice), berlin], [frel(alice, "lives in", berlin, F2, moved)],
        [Invalidation(old.id, moved)])
    lives = tilted(F1, F2, 0.7)
    assert [r.destination for r in store.search_graph(scope, query(lives))] == ["Berlin"]
    assert [r.destination for r in store.search_graph(scope, query(lives, as_of=datetime(2023, 12, 1, tzinfo=UTC)))] == ["Paris"]
    assert {r.destination for r in store.search_graph(scope, query(lives, include_invalidated=True))} == {"Paris", "Berlin"}
    flt = parse({"destination_entity": "Paris"})
    assert store.search_graph(scope, query(lives, filters=flt)) == []


def test_fact_candidates_never_cross_scopes(store: GraphStore, scope: Scope, pets) -> None:
    other = fresh_scope()
    assert store.search_graph(other, query(axis(F1))) == []


def test_a_bump_keeps_the_fact_or_fills_a_missing_one(store: GraphStore, scope: Scope, pets) -> None:
    alice, rex, acme, bob, carl = pets
    add(store, scope, at(5), [again(alice), again(rex), again(bob), again(carl)],
        [frel(alice, "has pet", rex, F3, fact="another wording"), frel(bob, "knows", carl, F3, fact="Bob knows Carl")])
    facts = {r.relationship: r.fact for r in store.get_all(scope)}
    assert facts["HAS_PET"] == "alice has pet Rex (dog)" and facts["KNOWS"] == "Bob knows Carl"
    assert [r.relationship for r in store.search_graph(scope, query(axis(F3)))] == ["KNOWS"]


def test_set_relation_facts_fills_every_version_of_the_scope_only(store: GraphStore, scope: Scope, pets) -> None:
    knows = next(r for r in store.get_all(scope) if r.relationship == "KNOWS")
    other = fresh_scope()
    assert store.set_relation_facts(other, [RelationFact(knows.id, knows.source_id, "stolen", axis(F3))]) == 0
    assert store.set_relation_facts(scope, [RelationFact(knows.id, knows.source_id, "Bob knows Carl", axis(F3))]) == 1
    (hit,) = store.search_graph(scope, query(axis(F3)))
    assert hit.id == knows.id and hit.fact == "Bob knows Carl"
    assert scope in store.scopes() and other not in store.scopes()


def test_provenance_records_the_adds_that_asserted_and_retired_a_version(store: GraphStore, scope: Scope) -> None:
    alice, paris, berlin = entity("alice", axis(0)), entity("Paris", axis(1)), entity("Berlin", axis(2))
    first = add(store, scope, at(0), [alice, paris], [frel(alice, "lives in", paris, F1)])
    second = add(store, scope, at(1), [again(alice), again(paris)], [frel(alice, "lives in", paris, F1)])
    (old,) = store.get_all(scope)
    assert old.provenance == [first, second] and old.retired_by is None
    third = add(store, scope, at(2), [again(alice), berlin], [frel(alice, "lives in", berlin, F2)], [Invalidation(old.id, at(2))])
    versions = {r.destination: r for r in store.get_all(scope, include_invalidated=True)}
    assert versions["Paris"].retired_by == third and versions["Berlin"].provenance == [third]
    assert versions["Paris"].to_dict()["provenance"] == {"added_by": [first, second], "retired_by": third}
    (hit,) = store.search_graph(scope, query(axis(F1), include_invalidated=True, fact_top_k=1))
    assert hit.retired_by == third
    assert {r.retired_by for r in store.timeline(scope, "alice")} == {third, None}


def test_a_restored_version_keeps_its_provenance(store: GraphStore, scope: Scope) -> None:
    alice, paris = entity("alice", axis(0)), entity("Paris", axis(1))
    r = frel(alice, "lives in", paris, F1)
    r.provenance, r.retired_by, r.expired_at, r.created_at = ["a-1", "a-2"], "a-3", at(3), at(1)
    store.write(GraphWrite(new_id(), scope, at(5), [alice, paris], [r]))
    (got,) = store.get_all(scope, include_invalidated=True)
    assert got.provenance == ["a-1", "a-2"] and got.retired_by == "a-3"


def test_search_with_facts_is_one_round_trip(store: GraphStore, scope: Scope, pets) -> None:
    before = store.round_trips
    store.search_graph(scope, query(axis(F1), seeds=["alice"], hops=2))
    assert store.round_trips - before == 1
    assert ids(store.search_graph(scope, query(axis(QUIET), fact_top_k=0))) == set()


def test_forget_entity_also_erases_versions_whose_fact_names_it(store: GraphStore, scope: Scope) -> None:
    from graphmem.stores.lifecycle import name_pattern

    bob, carl, ana = entity("Bob", axis(0)), entity("Carl", axis(1)), entity("Ana", axis(2))
    add(store, scope, T0, [bob, carl, ana], [frel(bob, "knows", carl, F1, fact="Bob knows Carl through Ana"),
                                             frel(carl, "likes", bob, F2, fact="Carl likes Bob")])
    store.forget_entity(scope, "ana", name_pattern("Ana"))  # type: ignore[attr-defined]
    assert [r.fact for r in store.get_all(scope, include_invalidated=True)] == ["Carl likes Bob"]
    assert store.search_graph(scope, query(axis(F1))) == []
