"""The store contract (graphmem/stores/base.py), run against every store through the ``store`` fixture.

Nothing here knows which store it tests. Stores may share a database between tests (Neo4j), so
every test works in fresh scopes; only ``test_reset_removes_every_scope`` touches other scopes.
Vectors are hand-made unit vectors: ``axis(i)`` is one-hot (orthogonal to every other axis) and
``tilted(i, j, cos)`` has exactly cosine ``cos`` with ``axis(i)``.
"""

from __future__ import annotations

import math
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from conftest import TEST_DIMS

from graphmem.stores.base import EntityCandidate, GraphQuery, GraphStore
from graphmem.types import (
    EntityWrite,
    GraphWrite,
    Invalidation,
    RelationWrite,
    Scope,
    canonical_name,
    display_name,
    new_id,
    sanitize_relation_type,
)

UTC = timezone.utc
T0 = datetime(2024, 1, 1, 12, 0, tzinfo=UTC)
QUIET = TEST_DIMS - 1  # an axis no test entity uses: a query embedding that seeds nothing


def axis(i: int) -> list[float]:
    vec = [0.0] * TEST_DIMS
    vec[i] = 1.0
    return vec


def tilted(i: int, j: int, cos: float) -> list[float]:
    """A unit vector with cosine ``cos`` to axis(i) (and sqrt(1 - cos²) to axis(j))."""
    vec = [0.0] * TEST_DIMS
    vec[i], vec[j] = cos, math.sqrt(1.0 - cos * cos)
    return vec


def at(minutes: int) -> datetime:
    return T0 + timedelta(minutes=minutes)


def fresh_scope(**ids: str) -> Scope:
    return Scope.of(**(ids or {"user_id": f"user-{uuid.uuid4().hex[:8]}"}))


def entity(name: str, vec: list[float], entity_type: str = "person") -> EntityWrite:
    return EntityWrite(new_id(), display_name(name), canonical_name(name), entity_type, vec, is_new=True)


def again(e: EntityWrite) -> EntityWrite:
    """The same entity in a later add (it exists now)."""
    return EntityWrite(e.id, e.name, e.canonical, e.entity_type, e.embedding, is_new=False)


def rel(src: EntityWrite, rel_type: str, dst: EntityWrite, valid_at: datetime = T0, invalid_at: datetime | None = None):
    return RelationWrite(src.id, sanitize_relation_type(rel_type), dst.id, valid_at, invalid_at)


def add(store: GraphStore, scope: Scope, when: datetime = T0, entities=(), relations=(), invalidations=()) -> str:
    add_id = new_id()
    store.write(GraphWrite(add_id, scope, when, list(entities), list(relations), list(invalidations)))
    return add_id


def query(embedding=None, text: str = "", seeds=(), **options) -> GraphQuery:
    return GraphQuery(embedding=embedding or axis(QUIET), text=text, seed_canonicals=list(seeds), **options)


def triples(relations) -> set[tuple[str, str, str]]:
    return {(r.source, r.relationship, r.destination) for r in relations}


def ids(items) -> set[str]:
    return {item.id for item in items}


@pytest.fixture
def abc(store: GraphStore, scope: Scope):
    """Alice -KNOWS-> Bob -LIKES-> Carla Jones, on axes 0, 1, 2."""
    a, b, c = entity("Alice", axis(0)), entity("Bob", axis(1)), entity("Carla Jones", axis(2))
    add(store, scope, T0, [a, b, c], [rel(a, "knows", b), rel(b, "likes", c)])
    return a, b, c


# --- setup, entities and matching -------------------------------------------------------------


def test_setup_is_idempotent(store: GraphStore, scope: Scope) -> None:
    store.setup()
    store.setup()
    add(store, scope, T0, [entity("Alice", axis(0))])
    assert [e.name for e in store.entities(scope)] == ["Alice"]


def test_new_entities_start_with_one_mention_and_touches_add_more(store: GraphStore, scope: Scope) -> None:
    alice, bob = entity("Alice", axis(0)), entity("Bob", axis(1))
    add(store, scope, at(0), [alice])
    add(store, scope, at(1), [bob])
    add(store, scope, at(2), [EntityWrite(alice.id, "alice", alice.canonical, "person", axis(0), is_new=False)])
    first, second = store.entities(scope)  # oldest first
    assert (first.id, first.name, first.mentions) == (alice.id, "Alice", 2)  # the name first said stays
    assert (first.created_at, first.updated_at) == (at(0), at(2))
    assert (second.id, second.name, second.mentions, second.created_at) == (bob.id, "Bob", 1, at(1))
    assert first.embedding is None and second.embedding is None


def test_a_touch_names_the_entity_by_id_even_under_another_name(store: GraphStore, scope: Scope) -> None:
    """A cosine match resolves "Bobby" to Robert: the add touches Robert and creates no "Bobby"."""
    robert, carol = entity("Robert", axis(0)), entity("Carol", axis(1))
    add(store, scope, at(0), [robert, carol])
    bobby = EntityWrite(robert.id, "Bobby", canonical_name("Bobby"), "person", tilted(0, 2, 0.9), is_new=False)
    add(store, scope, at(1), [bobby, again(carol)], [rel(bobby, "knows", carol)])
    assert [(e.name, e.mentions) for e in store.entities(scope)] == [("Robert", 2), ("Carol", 2)]
    assert triples(store.get_all(scope)) == {("Robert", "KNOWS", "Carol")}


def test_a_new_entity_whose_name_exists_joins_it_instead_of_making_a_twin(store: GraphStore, scope: Scope) -> None:
    """Two adds that both believed "Alice" was new (they ran concurrently) leave one Alice."""
    first, second, acme = entity("Alice", axis(0)), entity("alice", axis(0)), entity("Acme", axis(1))
    add(store, scope, at(0), [first])
    add(store, scope, at(1), [second, acme], [rel(second, "works at", acme)])
    alice, _ = store.entities(scope)
    assert (alice.id, alice.name, alice.mentions) == (first.id, "Alice", 2)
    (works,) = store.get_all(scope)
    assert works.source_id == first.id and works.source == "Alice"


def test_match_exact_canonical_resolves_case_and_spacing_variants(store: GraphStore, scope: Scope) -> None:
    smith, bob = entity("Alice Smith", axis(0)), entity("Bob", axis(1))
    add(store, scope, T0, [smith, bob])
    variants = ["ALICE SMITH", "alice   smith", "Alice_Smith", " alice smith "]
    # exact name wins even when the embedding is closer to another entity
    found = store.match_entities(scope, [EntityCandidate(canonical_name(v), axis(1)) for v in variants], 0.7)
    assert [m.id if m else None for m in found] == [smith.id] * len(variants)
    assert all(m.score == pytest.approx(1.0) and m.name == "Alice Smith" for m in found)


def test_match_by_cosine_above_and_below_threshold(store: GraphStore, scope: Scope) -> None:
    robert, rob = entity("Robert", axis(0)), entity("Rob Jr", tilted(0, 1, 0.6))
    add(store, scope, T0, [robert, rob])
    candidates = [
        EntityCandidate(canonical_name("Bobby"), tilted(0, 2, 0.9)),  # 0.9 to Robert, 0.54 to Rob Jr
        EntityCandidate(canonical_name("Roberta"), tilted(0, 2, 0.5)),  # below 0.7 for both
        EntityCandidate(canonical_name("Nobody"), axis(3)),
    ]
    bobby, roberta, nobody = store.match_entities(scope, candidates, 0.7)
    assert bobby is not None and bobby.id == robert.id and bobby.score == pytest.approx(0.9, abs=1e-3)
    assert roberta is None and nobody is None
    # the best match wins, not the first one above the threshold
    (best,) = store.match_entities(scope, [EntityCandidate("x", tilted(1, 0, 0.6))], 0.5)
    assert best is not None and best.id == rob.id


def test_match_of_fifty_candidates_is_one_round_trip(store: GraphStore, scope: Scope) -> None:
    known = [entity(f"Person {i}", axis(i)) for i in range(10)]
    add(store, scope, T0, known)
    candidates = [EntityCandidate(canonical_name(f"Person {i}"), axis(i % 10)) for i in range(50)]
    before = store.round_trips
    found = store.match_entities(scope, candidates, 0.7)
    assert store.round_trips - before == 1
    assert [m.id if m else None for m in found] == [known[i].id if i < 10 else known[i % 10].id for i in range(50)]


def test_match_in_an_empty_scope_finds_nothing(store: GraphStore, scope: Scope) -> None:
    assert store.match_entities(scope, [EntityCandidate("alice", axis(0))], 0.0) == [None]
    assert store.match_entities(scope, [], 0.7) == []


# --- writes -----------------------------------------------------------------------------------


def test_write_cost_does_not_grow_with_the_number_of_relations(store: GraphStore) -> None:
    def cost(n: int) -> int:
        scope = fresh_scope()
        hub = entity("Hub", axis(0))
        spokes = [entity(f"Spoke {i}", axis(1 + i)) for i in range(n)]
        before = store.round_trips
        add(store, scope, T0, [hub, *spokes], [rel(hub, "links", s) for s in spokes])
        return store.round_trips - before

    assert cost(1) == cost(30)


def test_invalidation_cost_does_not_grow_with_the_number_of_invalidations(store: GraphStore) -> None:
    def cost(n: int) -> int:
        scope = fresh_scope()
        hub = entity("Hub", axis(0))
        spokes = [entity(f"Spoke {i}", axis(1 + i)) for i in range(n)]
        add(store, scope, at(0), [hub, *spokes], [rel(hub, "links", s) for s in spokes])
        retire = [Invalidation(r.id, at(1)) for r in store.get_all(scope)]
        before = store.round_trips
        add(store, scope, at(1), invalidations=retire)
        return store.round_trips - before

    assert cost(1) == cost(20)


def test_asserting_a_triple_again_merges_into_the_current_instance(store: GraphStore, scope: Scope) -> None:
    alice, acme = entity("Alice", axis(0)), entity("Acme", axis(1), "organization")
    first = add(store, scope, at(0), [alice, acme], [rel(alice, "works at", acme)])
    second = add(store, scope, at(5), [again(alice), again(acme)], [rel(alice, "WORKS_AT", acme)])
    (merged,) = store.get_all(scope, include_invalidated=True)
    assert triples([merged]) == {("Alice", "WORKS_AT", "Acme")}
    assert (merged.source_id, merged.destination_id) == (alice.id, acme.id)
    assert merged.mentions == 2 and merged.provenance == [first, second]
    assert merged.created_at == at(0) and merged.is_current


def test_same_endpoints_with_another_type_is_another_relation(store: GraphStore, scope: Scope) -> None:
    alice, acme = entity("Alice", axis(0)), entity("Acme", axis(1))
    add(store, scope, T0, [alice, acme], [rel(alice, "works at", acme), rel(alice, "founded", acme)])
    assert triples(store.get_all(scope)) == {("Alice", "WORKS_AT", "Acme"), ("Alice", "FOUNDED", "Acme")}


def test_invalidation_retires_without_deleting(store: GraphStore, scope: Scope) -> None:
    alice, paris = entity("Alice", axis(0)), entity("Paris", axis(1))
    add(store, scope, at(0), [alice, paris], [rel(alice, "lives in", paris)])
    (lives,) = store.get_all(scope)
    moved_out = datetime(2024, 5, 15, tzinfo=UTC)
    add(store, scope, at(10), invalidations=[Invalidation(lives.id, moved_out)])
    assert store.get_all(scope) == []
    assert store.relations_around(scope, [alice.id, paris.id]) == []
    (retired,) = store.get_all(scope, include_invalidated=True)
    assert retired.id == lives.id and not retired.is_current
    assert (retired.invalid_at, retired.expired_at) == (moved_out, at(10))
    assert retired.created_at == at(0) and retired.valid_at == T0


def test_invalidating_twice_keeps_the_first_retirement(store: GraphStore, scope: Scope) -> None:
    alice, paris = entity("Alice", axis(0)), entity("Paris", axis(1))
    add(store, scope, at(0), [alice, paris], [rel(alice, "lives in", paris)])
    (lives,) = store.get_all(scope)
    add(store, scope, at(1), invalidations=[Invalidation(lives.id, at(1))])
    add(store, scope, at(2), invalidations=[Invalidation(lives.id, at(2))])
    (retired,) = store.get_all(scope, include_invalidated=True)
    assert (retired.invalid_at, retired.expired_at) == (at(1), at(1))


def test_reasserting_after_invalidation_creates_a_new_instance(store: GraphStore, scope: Scope) -> None:
    alice, paris = entity("Alice", axis(0)), entity("Paris", axis(1))
    add(store, scope, at(0), [alice, paris], [rel(alice, "lives in", paris)])
    (old,) = store.get_all(scope)
    add(store, scope, at(1), invalidations=[Invalidation(old.id, at(1))])
    back = add(store, scope, at(2), [again(alice), again(paris)], [rel(alice, "lives in", paris, valid_at=at(2))])
    both = store.get_all(scope, include_invalidated=True)
    assert [r.id for r in both][0] == old.id and len(both) == 2  # oldest first
    (current,) = store.get_all(scope)
    assert current.id != old.id and current.provenance == [back] and current.mentions == 1
    assert current.valid_at == at(2) and current.created_at == at(2)


def test_invalidation_and_reassertion_in_one_write(store: GraphStore, scope: Scope) -> None:
    """Invalidations apply before relations, so the same add can retire and restate a triple."""
    alice, paris = entity("Alice", axis(0)), entity("Paris", axis(1))
    add(store, scope, at(0), [alice, paris], [rel(alice, "lives in", paris)])
    (old,) = store.get_all(scope)
    add(store, scope, at(1), [again(alice), again(paris)], [rel(alice, "lives in", paris, at(1))], [Invalidation(old.id, at(1))])
    assert len(store.get_all(scope, include_invalidated=True)) == 2
    (current,) = store.get_all(scope)
    assert current.id != old.id


def test_invalidating_another_scopes_relation_does_nothing(store: GraphStore, scope: Scope) -> None:
    other = fresh_scope()
    alice, paris = entity("Alice", axis(0)), entity("Paris", axis(1))
    add(store, other, at(0), [alice, paris], [rel(alice, "lives in", paris)])
    (theirs,) = store.get_all(other)
    add(store, scope, at(1), [entity("Alice", axis(0))], invalidations=[Invalidation(theirs.id, at(1))])
    (still,) = store.get_all(other)
    assert still.id == theirs.id and still.is_current


def test_relations_around_returns_current_relations_touching_the_entities(store: GraphStore, scope: Scope) -> None:
    a, b, c, d = (entity(n, axis(i)) for i, n in enumerate(["A", "B", "C", "D"]))
    add(store, scope, at(0), [a, b, c, d], [rel(a, "knows", b), rel(c, "knows", a), rel(b, "knows", d), rel(a, "met", d)])
    met = next(r for r in store.get_all(scope) if r.relationship == "MET")
    add(store, scope, at(1), invalidations=[Invalidation(met.id, at(1))])
    assert triples(store.relations_around(scope, [a.id])) == {("A", "KNOWS", "B"), ("C", "KNOWS", "A")}
    assert len(store.relations_around(scope, [a.id, b.id])) == 3  # A->B once
    assert store.relations_around(scope, []) == []
    assert store.relations_around(scope, [new_id()]) == []


def test_get_all_is_oldest_first_and_limited(store: GraphStore, scope: Scope) -> None:
    a, b, c, d = (entity(n, axis(i)) for i, n in enumerate(["A", "B", "C", "D"]))
    add(store, scope, at(0), [a, b], [rel(a, "first", b)])
    add(store, scope, at(1), [again(b), c], [rel(b, "second", c)])
    add(store, scope, at(2), [again(c), d], [rel(c, "third", d)])
    assert [r.relationship for r in store.get_all(scope)] == ["FIRST", "SECOND", "THIRD"]
    assert [r.relationship for r in store.get_all(scope, limit=2)] == ["FIRST", "SECOND"]


# --- search ------------------------------------------------------------------------------------

SCORE_KEYS = {"vector", "fulltext", "seed"}


def test_search_returns_relations_of_vector_seeds(store: GraphStore, scope: Scope, abc) -> None:
    found = store.search_graph(scope, query(axis(0)))
    assert triples(found) == {("Alice", "KNOWS", "Bob")}
    (hit,) = found
    assert set(hit.scores) == SCORE_KEYS
    assert hit.scores["vector"] == pytest.approx(1.0, abs=1e-3)
    assert hit.scores["fulltext"] == 0.0 and hit.scores["seed"] == 0.0


def test_search_respects_top_k_and_threshold(store: GraphStore, scope: Scope, abc) -> None:
    near_alice = tilted(0, 1, 0.9)  # 0.9 to Alice, 0.44 to Bob
    assert triples(store.search_graph(scope, query(near_alice, top_k=1))) == {("Alice", "KNOWS", "Bob")}
    both = store.search_graph(scope, query(near_alice, top_k=2))
    assert triples(both) == {("Alice", "KNOWS", "Bob"), ("Bob", "LIKES", "Carla Jones")}
    scores = {r.relationship: r.scores["vector"] for r in both}
    assert scores["KNOWS"] == pytest.approx(0.9, abs=1e-3)  # the best seeded endpoint
    assert scores["LIKES"] == pytest.approx(math.sqrt(1 - 0.81), abs=1e-3)
    assert store.search_graph(scope, query(tilted(0, QUIET, 0.2), threshold=0.3)) == []


def test_search_deduplicates_relations_seeded_at_both_ends(store: GraphStore, scope: Scope, abc) -> None:
    between = [x / math.sqrt(2) for x in (a + b for a, b in zip(axis(0), axis(1)))]
    found = store.search_graph(scope, query(between))
    assert sorted(r.relationship for r in found) == ["KNOWS", "LIKES"]
    assert len(ids(found)) == len(found)


def test_search_returns_relations_of_name_seeds(store: GraphStore, scope: Scope, abc) -> None:
    found = store.search_graph(scope, query(seeds=[canonical_name("Carla Jones")]))
    assert triples(found) == {("Bob", "LIKES", "Carla Jones")}
    (hit,) = found
    assert set(hit.scores) == SCORE_KEYS and hit.scores["seed"] == 1.0 and hit.scores["vector"] == 0.0


def test_search_returns_relations_of_fulltext_seeds(store: GraphStore, scope: Scope, abc) -> None:
    found = store.search_graph(scope, query(text="what does carla do on weekends?"))
    assert triples(found) == {("Bob", "LIKES", "Carla Jones")}
    (hit,) = found
    assert set(hit.scores) == SCORE_KEYS
    assert 0.0 < hit.scores["fulltext"] <= 1.0 and hit.scores["seed"] == 0.0 and hit.scores["vector"] == 0.0
    assert store.search_graph(scope, query(text="nothing matches here")) == []


def test_search_hides_invalidated_relations_unless_asked(store: GraphStore, scope: Scope, abc) -> None:
    (knows,) = [r for r in store.get_all(scope) if r.relationship == "KNOWS"]
    add(store, scope, at(1), invalidations=[Invalidation(knows.id, at(1))])
    assert store.search_graph(scope, query(axis(0))) == []
    assert ids(store.search_graph(scope, query(axis(0), include_invalidated=True))) == {knows.id}


def _moves(store: GraphStore, scope: Scope, retire_by_invalidation: bool) -> tuple[str, str]:
    """Alice lived in Paris 2023-03-01..2024-05-15, then in Berlin; returns (paris id, berlin id)."""
    alice, paris, berlin = entity("Alice", axis(0)), entity("Paris", axis(1)), entity("Berlin", axis(2))
    start, moved = datetime(2023, 3, 1, tzinfo=UTC), datetime(2024, 5, 15, tzinfo=UTC)
    ended = None if retire_by_invalidation else moved
    add(store, scope, datetime(2023, 3, 2, tzinfo=UTC), [alice, paris], [rel(alice, "lives in", paris, start, ended)])
    (old,) = store.get_all(scope, include_invalidated=True)
    retire = [Invalidation(old.id, moved)] if retire_by_invalidation else []
    add(store, scope, datetime(2024, 6, 1, tzinfo=UTC), [again(alice), berlin], [rel(alice, "lives in", berlin, moved)], retire)
    new = next(r for r in store.get_all(scope, include_invalidated=True) if r.destination == "Berlin")
    return old.id, new.id


@pytest.mark.parametrize("retire_by_invalidation", [False, True], ids=["closed-interval", "invalidated"])
def test_search_as_of_returns_what_was_valid_then(store: GraphStore, scope: Scope, retire_by_invalidation: bool) -> None:
    paris, berlin = _moves(store, scope, retire_by_invalidation)

    def valid(when: datetime) -> set[str]:
        return ids(store.search_graph(scope, query(axis(0), as_of=when)))

    assert valid(datetime(2023, 12, 1, tzinfo=UTC)) == {paris}
    assert valid(datetime(2024, 7, 1, tzinfo=UTC)) == {berlin}
    assert valid(datetime(2024, 5, 15, tzinfo=UTC)) == {berlin}  # valid_at <= as_of < invalid_at
    assert valid(datetime(2022, 1, 1, tzinfo=UTC)) == set()
    assert ids(store.search_graph(scope, query(axis(0)))) == {berlin}  # default: current only
    assert ids(store.search_graph(scope, query(axis(0), include_invalidated=True))) == {paris, berlin}


# --- scopes ------------------------------------------------------------------------------------


def _same_world(store: GraphStore, scope: Scope) -> tuple[EntityWrite, EntityWrite]:
    alice, acme = entity("Alice", axis(0)), entity("Acme", axis(1))
    add(store, scope, T0, [alice, acme], [rel(alice, "works at", acme)])
    return alice, acme


def test_scopes_with_identical_content_never_see_each_other(store: GraphStore) -> None:
    user = f"user-{uuid.uuid4().hex[:8]}"
    scopes = [Scope.of(user_id=user), Scope.of(user_id=user, agent_id="helper"), fresh_scope(), Scope.of(agent_id=user)]
    worlds = {s: _same_world(store, s) for s in scopes}
    for s, (alice, acme) in worlds.items():
        mine = {alice.id, acme.id}
        (relation,) = store.get_all(s)
        assert {relation.source_id, relation.destination_id} == mine
        assert ids(store.entities(s)) == mine
        (match,) = store.match_entities(s, [EntityCandidate(canonical_name("alice"), axis(0))], 0.7)
        assert match is not None and match.id == alice.id
        (by_vector,) = store.match_entities(s, [EntityCandidate("someone else", axis(0))], 0.7)
        assert by_vector is not None and by_vector.id == alice.id
        found = store.search_graph(s, query(axis(0), text="acme", seeds=["alice"], include_invalidated=True))
        assert ids(found) == {relation.id}
        others = [e.id for o, (a, b) in worlds.items() if o != s for e in (a, b)]
        assert store.relations_around(s, others) == []


def test_delete_all_removes_only_that_scope(store: GraphStore, scope: Scope) -> None:
    other = fresh_scope()
    _same_world(store, scope)
    theirs, _ = _same_world(store, other)
    assert store.delete_all(scope) == 2
    assert store.get_all(scope, include_invalidated=True) == [] and store.entities(scope) == []
    assert store.match_entities(scope, [EntityCandidate("alice", axis(0))], 0.5) == [None]
    assert len(store.get_all(other)) == 1 and theirs.id in ids(store.entities(other))
    assert store.delete_all(scope) == 0
    alice, _ = _same_world(store, scope)  # the scope starts over cleanly
    (match,) = store.match_entities(scope, [EntityCandidate("alice", axis(3))], 0.7)
    assert match is not None and match.id == alice.id and match.mentions == 1


# --- hostile input -----------------------------------------------------------------------------

HOSTILE_TYPES = [
    "works at", "WORKS-AT", "`KNOWS`", "likes'); DROP TABLE x;--", 'says "hi"', "x`]->() DETACH DELETE n //",
    "über straße", "喜欢", "loves 😍 a lot", "123 start", "", "   ", "a\nb", "{$param}", "\\u0060", "-[r]-",
]  # fmt: skip
HOSTILE_NAMES = [
    "O'Brien", 'Dr. "Quote" Jones', "back`tick", "x`]->() DETACH DELETE n //", "'); MATCH (n) DETACH DELETE n; //",
    "$name {param}", "Zoë Ünïcödé", "東京", "party 🎉👩‍👩‍👧", "back\\slash", "null", "-1", "a\\u0000b",
]  # fmt: skip


def test_hostile_relationship_types_are_sanitised_and_round_trip(store: GraphStore, scope: Scope) -> None:
    a, b = entity("A", axis(0)), entity("B", axis(1))
    add(store, scope, T0, [a, b], [rel(a, t, b) for t in HOSTILE_TYPES])
    expected = {sanitize_relation_type(t) for t in HOSTILE_TYPES}
    assert all(ch.isalnum() or ch == "_" for t in expected for ch in t)
    assert {r.relationship for r in store.get_all(scope)} == expected
    assert len(store.get_all(scope)) == len(expected)  # equal sanitised types merged
    assert len(store.entities(scope)) == 2


def test_hostile_names_and_scope_ids_round_trip(store: GraphStore) -> None:
    tag = uuid.uuid4().hex[:8]
    scope = Scope.of(user_id=f"o'brien \"`x`\" {{$u}} 🎉 {tag}", agent_id="a`]->() //", run_id="r\\n;--")
    lookalike = Scope.of(user_id=f"o'brien \"`x`\" {{$u}} 🎉 {tag}", agent_id="a`]->() //")
    names = [display_name(n) for n in HOSTILE_NAMES]
    written = [entity(n, axis(i)) for i, n in enumerate(names)]
    add(store, scope, T0, written, [rel(x, "next", y) for x, y in zip(written, written[1:])])
    assert [e.name for e in store.entities(scope)] == names
    found = store.match_entities(scope, [EntityCandidate(e.canonical, axis(QUIET)) for e in written], 0.9)
    assert [m.id if m else None for m in found] == [e.id for e in written]
    assert [(r.source, r.destination) for r in store.get_all(scope)] == list(zip(names, names[1:]))
    assert store.entities(lookalike) == [] and store.get_all(lookalike) == []


# --- time ----------------------------------------------------------------------------------------


def _is_utc(value: datetime | None) -> bool:
    return isinstance(value, datetime) and value.tzinfo is not None and value.utcoffset() == timedelta(0)


def _close(a: datetime | None, b: datetime) -> bool:
    return a is not None and abs(a - b) < timedelta(milliseconds=1)


def test_datetimes_come_back_aware_utc_and_equal(store: GraphStore, scope: Scope) -> None:
    created = datetime(2024, 2, 29, 13, 45, 12, 123456, tzinfo=UTC)
    kolkata = timezone(timedelta(hours=5, minutes=30))
    valid = datetime(2023, 1, 2, 3, 4, 5, 678901, tzinfo=kolkata)
    ended = datetime(2030, 12, 31, 23, 59, 59, 999999, tzinfo=timezone(timedelta(hours=-8)))
    touched, retired = created + timedelta(days=1, microseconds=7), created + timedelta(days=2, microseconds=11)
    a, b = entity("A", axis(0)), entity("B", axis(1))
    add(store, scope, created, [a, b], [rel(a, "knows", b, valid), rel(a, "met", b, valid, ended)])
    add(store, scope, touched, [again(a)])
    knows = next(r for r in store.get_all(scope) if r.relationship == "KNOWS")
    add(store, scope, retired, invalidations=[Invalidation(knows.id, valid + timedelta(days=30))])
    first = store.entities(scope)[0]
    assert _is_utc(first.created_at) and _close(first.created_at, created)
    assert _is_utc(first.updated_at) and _close(first.updated_at, touched)
    for r in store.get_all(scope, include_invalidated=True):
        assert _is_utc(r.valid_at) and _close(r.valid_at, valid)
        assert _is_utc(r.created_at) and _close(r.created_at, created)
        assert _is_utc(r.invalid_at)
        if r.relationship == "MET":
            assert _close(r.invalid_at, ended) and r.expired_at is None
        else:
            assert _close(r.invalid_at, valid + timedelta(days=30)) and _is_utc(r.expired_at)
            assert _close(r.expired_at, retired)


# --- reset (touches every scope: keep it last) ------------------------------------------------


def test_reset_removes_every_scope(store: GraphStore, scope: Scope) -> None:
    other = fresh_scope()
    _same_world(store, scope)
    _same_world(store, other)
    store.reset()
    for s in (scope, other):
        assert store.entities(s) == [] and store.get_all(s, include_invalidated=True) == []
    _same_world(store, scope)  # usable after a reset
    assert len(store.get_all(scope)) == 1
