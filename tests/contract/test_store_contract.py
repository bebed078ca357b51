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

from graphmem.errors import InvalidInputError
from graphmem.schema.filters import parse
from graphmem.stores.base import EntityCandidate, GraphQuery, GraphStore, MemoryQuery
from graphmem.types import (
    EntityWrite,
    GraphWrite,
    Invalidation,
    MemoryWrite,
    RelationWrite,
    Scope,
    canonical_name,
    display_name,
    new_id,
    sanitize_relation_type,
    text_hash,
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
    assert {(e.name, e.mentions) for e in store.entities(scope)} == {("Robert", 2), ("Carol", 2)}
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
    assert hit.scores["seed"] == pytest.approx(1.0, abs=1e-3)  # the endpoint's cosine: entity proximity
    assert hit.scores["fulltext"] == 0.0 and hit.scores["vector"] == 0.0  # no fact embedding: no meaning of its own


def test_search_respects_top_k_and_threshold(store: GraphStore, scope: Scope, abc) -> None:
    near_alice = tilted(0, 1, 0.9)  # 0.9 to Alice, 0.44 to Bob
    assert triples(store.search_graph(scope, query(near_alice, top_k=1))) == {("Alice", "KNOWS", "Bob")}
    both = store.search_graph(scope, query(near_alice, top_k=2))
    assert triples(both) == {("Alice", "KNOWS", "Bob"), ("Bob", "LIKES", "Carla Jones")}
    scores = {r.relationship: r.scores["seed"] for r in both}
    assert scores["KNOWS"] == pytest.approx(0.9, abs=1e-3)  # the best seeded endpoint
    assert scores["LIKES"] == pytest.approx(math.sqrt(1 - 0.81), abs=1e-3)
    assert store.search_graph(scope, query(tilted(0, QUIET, 0.2), threshold=0.3)) == []


def test_search_deduplicates_relations_seeded_at_both_ends(store: GraphStore, scope: Scope, abc) -> None:
    between = [x / math.sqrt(2) for x in (a + b for a, b in zip(axis(0), axis(1), strict=False))]
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


def test_a_possessive_in_the_question_seeds_the_name(store: GraphStore, scope: Scope, abc) -> None:
    """"Carla's" names Carla on both stores (Lucene keeps "carla's" one token; the embedded store's
    word tokens split it), with the same score as the bare name."""
    for text in ("what does Carla's brother like?", "what does Carla’s brother like?"):
        found = store.search_graph(scope, query(text=text))
        assert triples(found) == {("Bob", "LIKES", "Carla Jones")}
        bare = store.search_graph(scope, query(text="what does Carla brother like?"))
        assert found[0].scores["fulltext"] == pytest.approx(bare[0].scores["fulltext"]) and found[0].scores["fulltext"] > 0


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
    # the same id as a user, an agent, a run, and another user: four partitions (a user's runs and
    # agents share the user's partition: tests/test_scopes.py)
    scopes = [Scope.of(user_id=user), Scope.of(run_id=user), fresh_scope(), Scope.of(agent_id=user)]
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
    lookalike = Scope.of(user_id=f"o'brien \"`x`\" {{$u}} 🎉 {tag}_", agent_id="a`]->() //")  # ids match exactly, never as prefixes
    same_user_other_run = Scope.of(user_id=scope.user_id, agent_id="a`]->() //", run_id="r\\n;-")
    names = [display_name(n) for n in HOSTILE_NAMES]
    written = [entity(n, axis(i)) for i, n in enumerate(names)]
    add(store, scope, T0, written, [rel(x, "next", y) for x, y in zip(written, written[1:], strict=False)])
    assert sorted(e.name for e in store.entities(scope)) == sorted(names)  # one add: created_at ties
    found = store.match_entities(scope, [EntityCandidate(e.canonical, axis(QUIET)) for e in written], 0.9)
    assert [m.id if m else None for m in found] == [e.id for e in written]
    assert {(r.source, r.destination) for r in store.get_all(scope)} == set(zip(names, names[1:], strict=False))
    assert store.entities(lookalike) == [] and store.get_all(lookalike) == []
    assert store.get_all(same_user_other_run) == []


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
    first = next(e for e in store.entities(scope) if e.id == a.id)
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


# --- memory facts ------------------------------------------------------------------------------


def fact(
    text: str, vec: list[float], *, memory_id: str | None = None, event: str = "ADD",
    metadata: dict | None = None, role: str | None = "user", entity_ids=(),
) -> MemoryWrite:  # fmt: skip
    return MemoryWrite(event, memory_id or new_id(), text, vec, metadata, role, list(entity_ids))


def update(memory_id: str, text: str, vec: list[float], metadata: dict | None = None, entity_ids=()) -> MemoryWrite:
    return MemoryWrite("UPDATE", memory_id, text, vec, metadata, None, list(entity_ids))


def forget(memory_id: str) -> MemoryWrite:
    return MemoryWrite("DELETE", memory_id)


def remember(store: GraphStore, scope: Scope, when: datetime, *memories: MemoryWrite, entities=(), relations=()):
    """One write of ``memories`` (after the entities and relations, if any)."""
    store.write(GraphWrite(new_id(), scope, when, list(entities), list(relations), [], list(memories)))


def mquery(embedding=None, text: str = "", filters=None, **options) -> MemoryQuery:
    return MemoryQuery(embedding=embedding or axis(QUIET), text=text, filters=parse(filters), **options)


def test_memory_add_stores_every_field(store: GraphStore) -> None:
    scope = fresh_scope(user_id=f"u-{uuid.uuid4().hex[:8]}", agent_id="helper", run_id="r1")
    tea = fact("Drinks green tea", axis(0), metadata={"session": 1, "topic": "habits"})
    bare = fact("Walks to work", axis(1), metadata=None, role=None)
    remember(store, scope, at(0), tea, bare)
    got = store.get_memory(tea.id)
    assert got is not None
    assert (got.id, got.text, got.hash, got.role) == (tea.id, "Drinks green tea", text_hash("Drinks green tea"), "user")
    assert (got.user_id, got.agent_id, got.run_id) == (scope.user_id, "helper", "r1")
    assert got.metadata == {"session": 1, "topic": "habits"}
    assert _close(got.created_at, at(0)) and _close(got.updated_at, at(0)) and got.deleted_at is None
    assert _is_utc(got.created_at) and _is_utc(got.updated_at)
    other = store.get_memory(bare.id)
    assert other is not None and other.metadata == {} and other.role is None
    assert ids(store.list_memories(scope)) == {tea.id, bare.id}
    assert store.get_memory(new_id()) is None


def test_memory_update_replaces_text_and_embedding_and_keeps_metadata(store: GraphStore, scope: Scope) -> None:
    pizza = fact("Likes cheese pizza", axis(0), metadata={"session": 1})
    remember(store, scope, at(0), pizza)
    remember(store, scope, at(1), update(pizza.id, "Loves chicken pizza", axis(1)))
    got = store.get_memory(pizza.id)
    assert got is not None and (got.text, got.hash) == ("Loves chicken pizza", text_hash("Loves chicken pizza"))
    assert _close(got.created_at, at(0)) and _close(got.updated_at, at(1)) and got.deleted_at is None
    assert got.metadata == {"session": 1}  # metadata None: kept
    (hits,) = store.similar_memories(scope, [axis(1)], top_k=1)
    assert [m.id for m in hits] == [pizza.id] and hits[0].score == pytest.approx(1.0, abs=1e-4)
    remember(store, scope, at(2), update(pizza.id, "Loves chicken pizza", axis(1), metadata={}))
    got = store.get_memory(pizza.id)
    assert got is not None and got.metadata == {} and _close(got.updated_at, at(2))
    assert len(store.list_memories(scope, include_deleted=True)) == 1  # updated in place


def test_memory_delete_is_soft_and_hides_the_memory(store: GraphStore, scope: Scope) -> None:
    kept, gone = fact("Plays chess", axis(0)), fact("Plays tennis", axis(1))
    remember(store, scope, at(0), kept, gone)
    remember(store, scope, at(5), forget(gone.id))
    got = store.get_memory(gone.id)
    assert got is not None and got.text == "Plays tennis" and _close(got.deleted_at, at(5))
    assert [m.id for m in store.list_memories(scope)] == [kept.id]
    assert ids(store.list_memories(scope, include_deleted=True)) == {kept.id, gone.id}
    assert [[m.id for m in hits] for hits in store.similar_memories(scope, [axis(1)], top_k=5)] == [[kept.id]]
    assert ids(store.search_memories(scope, mquery(axis(1), "tennis"))) == {kept.id}
    remember(store, scope, at(6), update(gone.id, "Plays tennis again", axis(1)), forget(gone.id))
    got = store.get_memory(gone.id)  # a soft-deleted memory is neither updated nor deleted again
    assert got is not None and got.text == "Plays tennis" and _close(got.deleted_at, at(5))


def test_memory_ops_in_one_write_apply_in_order(store: GraphStore, scope: Scope) -> None:
    first = fact("Owns a cat", axis(0))
    remember(store, scope, at(0), first, update(first.id, "Owns two cats", axis(1)))
    got = store.get_memory(first.id)
    assert got is not None and got.text == "Owns two cats" and _close(got.created_at, at(0))
    second = fact("Owns a dog", axis(2))
    remember(store, scope, at(1), second, forget(second.id), update(second.id, "Owns a parrot", axis(3)))
    got = store.get_memory(second.id)  # deleted in the write before the UPDATE came: not updated
    assert got is not None and got.text == "Owns a dog" and _close(got.deleted_at, at(1))
    assert [m.text for m in store.list_memories(scope)] == ["Owns two cats"]


def test_memories_are_written_with_the_graph_or_not_at_all(store: GraphStore, scope: Scope) -> None:
    other = fresh_scope()
    theirs = entity("Mallory", axis(5))
    add(store, other, T0, [theirs])
    boston, me = entity("Boston", axis(0)), entity("Me", axis(1))
    linked = fact("Lives in Boston", axis(0), entity_ids=[boston.id, theirs.id, new_id()])  # foreign ids ignored
    remember(store, scope, at(0), linked, entities=[boston, me], relations=[rel(me, "lives in", boston)])
    assert [m.id for m in store.list_memories(scope)] == [linked.id]
    assert triples(store.get_all(scope)) == {("Me", "LIVES_IN", "Boston")}
    ghost = entity("Ghost", axis(2))
    broken = fact("Knows a ghost", axis(2))
    with pytest.raises(InvalidInputError):  # a relation to an entity of another scope fails the whole write
        remember(store, scope, at(1), broken, entities=[ghost], relations=[rel(ghost, "knows", theirs)])
    assert store.get_memory(broken.id) is None and [m.id for m in store.list_memories(scope)] == [linked.id]
    assert "Ghost" not in {e.name for e in store.entities(scope)}


def test_memories_with_the_same_text_in_two_scopes_stay_apart(store: GraphStore, scope: Scope) -> None:
    other = fresh_scope()
    mine, theirs = fact("Allergic to peanuts", axis(0)), fact("Allergic to peanuts", axis(0))
    remember(store, scope, at(0), mine)
    remember(store, other, at(0), theirs)
    assert [m.id for m in store.list_memories(scope)] == [mine.id]
    assert [m.id for m in store.list_memories(other)] == [theirs.id]
    assert [[m.id for m in hits] for hits in store.similar_memories(scope, [axis(0)], top_k=5)] == [[mine.id]]
    assert ids(store.search_memories(scope, mquery(axis(0), "peanuts"))) == {mine.id}
    remember(store, scope, at(1), update(theirs.id, "Hijacked", axis(1)), forget(theirs.id))  # another scope's ids
    got = store.get_memory(theirs.id)
    assert got is not None and got.text == "Allergic to peanuts" and got.deleted_at is None
    assert got.user_id == other.user_id  # get_memory reads any scope
    remember(store, scope, at(2), fact("Hijacked too", axis(1), memory_id=theirs.id))  # an ADD cannot take it over
    got = store.get_memory(theirs.id)
    assert got is not None and got.text == "Allergic to peanuts" and got.user_id == other.user_id
    assert [m.id for m in store.list_memories(scope)] == [mine.id]


def test_similar_memories_ranks_by_cosine_in_one_round_trip(store: GraphStore, scope: Scope) -> None:
    vectors = [axis(0), tilted(0, 1, 0.9), tilted(0, 1, 0.5), axis(2)]
    near, mid, far, apart = (fact(f"fact {i}", v) for i, v in enumerate(vectors))
    remember(store, scope, at(0), far, apart, near, mid)
    before = store.round_trips
    found = store.similar_memories(scope, [axis(0), axis(2), tilted(2, 3, 0.8)], top_k=2)
    assert store.round_trips - before == 1
    assert [m.id for m in found[0]] == [near.id, mid.id]
    assert found[1][0].id == apart.id and len(found[1]) == 2  # the rest tie at cosine 0
    assert [m.score for m in found[0]] == [pytest.approx(1.0, abs=1e-4), pytest.approx(0.9, abs=1e-4)]
    assert found[2][0].id == apart.id and found[2][0].score == pytest.approx(0.8, abs=1e-4)
    assert store.similar_memories(fresh_scope(), [axis(0)], top_k=3) == [[]]


def test_search_memories_merges_vector_and_fulltext_candidates(store: GraphStore, scope: Scope) -> None:
    tea = fact("Drinks green tea every morning", axis(0))
    chess = fact("Plays chess with Bob", axis(1))
    quimby = fact("Quimby: 555-0192", axis(2))
    remember(store, scope, at(0), tea, chess, quimby)
    before = store.round_trips
    found = {m.id: m for m in store.search_memories(scope, mquery(axis(0), "what is the number of QUIMBY?", top_k=1))}
    assert store.round_trips - before == 1
    assert set(found) == {tea.id, quimby.id}  # top 1 by vector, top 1 by text; chess matches neither
    for m in found.values():
        assert {"vector", "fulltext"} <= set(m.scores) and 0.0 <= m.scores["fulltext"] <= 1.0
    assert found[tea.id].scores["vector"] == pytest.approx(1.0, abs=1e-4) and found[tea.id].scores["fulltext"] == 0.0
    assert found[quimby.id].scores["fulltext"] == pytest.approx(1.0) and found[quimby.id].scores["vector"] < 0.5
    assert found[tea.id].text == "Drinks green tea every morning"
    assert found[quimby.id].hash == text_hash("Quimby: 555-0192")


def test_search_memories_fulltext_is_a_lexical_match(store: GraphStore, scope: Scope) -> None:
    both = fact("Dentist PHONE, changed!", axis(0))
    one = fact("New phone bought yesterday", axis(1))
    none = fact("Likes jazz", axis(2))
    remember(store, scope, at(0), both, one, none)
    found = store.search_memories(scope, mquery(axis(QUIET), "dentist phone", top_k=3))
    text = {m.id: m.scores["fulltext"] for m in found}
    assert text[both.id] == pytest.approx(1.0) and 0.0 < text[one.id] < 1.0
    assert text.get(none.id, 0.0) == 0.0
    assert store.search_memories(fresh_scope(), mquery(axis(0), "dentist phone")) == []


def test_search_memories_filters_on_metadata_in_the_store(store: GraphStore, scope: Scope) -> None:
    first = fact("Prefers window seats", axis(0), metadata={"session": 1, "topic": "travel", "city": "東京"})
    second = fact("Prefers aisle seats", tilted(0, 1, 0.9), metadata={"session": 2, "flag": True})
    bare = fact("Prefers any seat", tilted(0, 1, 0.8))
    remember(store, scope, at(0), first, second, bare)

    def found(filters, top_k=10) -> set[str]:
        return ids(store.search_memories(scope, mquery(axis(0), "seats", top_k=top_k, filters=filters)))

    assert found(None) == found({}) == {first.id, second.id, bare.id}
    assert found({"session": 1}) == {first.id}
    assert found({"session": 1, "topic": "travel"}) == {first.id}
    assert found({"session": 1, "topic": "food"}) == set()  # every key must match
    assert found({"missing": 1}) == set()  # a missing key does not match
    assert found({"city": "東京"}) == {first.id} and found({"flag": True}) == {second.id}
    assert found({"session": "1"}) == set()  # equality, not string likeness
    assert found({"session": 2}, top_k=1) == {second.id}  # filtered before the top_k cut


def test_search_memories_as_of_returns_what_existed_then(store: GraphStore, scope: Scope) -> None:
    old, new = fact("Lives in Paris", axis(0)), fact("Lives in Berlin", axis(0))
    remember(store, scope, at(0), old)
    remember(store, scope, at(10), new)
    remember(store, scope, at(20), forget(old.id))

    def found(as_of) -> set[str]:
        return ids(store.search_memories(scope, mquery(axis(0), "lives", as_of=as_of)))

    assert found(None) == {new.id}
    assert found(at(-1)) == set()
    assert found(at(0)) == found(at(5)) == {old.id}  # created_at <= as_of
    assert found(at(10)) == found(at(15)) == {old.id, new.id}
    assert found(at(20)) == {new.id}  # as_of < deleted_at


def test_delete_memory_removes_it_for_good(store: GraphStore, scope: Scope) -> None:
    boston = entity("Boston", axis(0))
    kept, soft = fact("Plays chess", axis(0)), fact("x", axis(1))
    gone = fact("Lives in Boston", axis(0), entity_ids=[boston.id])
    remember(store, scope, at(0), kept, gone, soft, entities=[boston])
    remember(store, scope, at(1), forget(soft.id))
    before = store.round_trips
    assert store.delete_memory(gone.id) is True
    assert store.round_trips - before == 1
    assert store.get_memory(gone.id) is None
    assert store.delete_memory(soft.id) is True and store.get_memory(soft.id) is None  # soft-deleted ones too
    assert [m.id for m in store.list_memories(scope, include_deleted=True)] == [kept.id]
    assert ids(store.search_memories(scope, mquery(axis(0), "Boston"))) == {kept.id}
    assert store.delete_memory(gone.id) is False and store.delete_memory(new_id()) is False
    remember(store, scope, at(2), update(gone.id, "back?", axis(0)))  # an UPDATE does not bring it back
    assert store.get_memory(gone.id) is None
    assert [e.name for e in store.entities(scope)] == ["Boston"]  # the entity it mentioned stays


def test_list_memories_is_oldest_first_and_limited(store: GraphStore, scope: Scope) -> None:
    made = [fact(f"fact {i}", axis(i)) for i in range(4)]
    for i, m in enumerate(reversed(made)):
        remember(store, scope, at(10 - i), m)  # made[3] first in the calls, made[0] oldest by time
    remember(store, scope, at(20), forget(made[1].id))
    assert [m.id for m in store.list_memories(scope)] == [made[0].id, made[2].id, made[3].id]
    assert [m.id for m in store.list_memories(scope, include_deleted=True)] == [m.id for m in made]
    assert [m.id for m in store.list_memories(scope, limit=2)] == [made[0].id, made[2].id]
    assert store.list_memories(fresh_scope()) == []


def test_delete_all_removes_the_scopes_memories(store: GraphStore, scope: Scope) -> None:
    other, bare = fresh_scope(), fresh_scope()
    _same_world(store, scope)
    mine = fact("Mine too", axis(1))
    remember(store, scope, at(0), fact("Mine", axis(0)), mine)
    remember(store, scope, at(1), forget(mine.id))
    theirs = fact("Theirs", axis(0))
    remember(store, other, at(0), theirs)
    only = fact("Only memories here", axis(0))
    remember(store, bare, at(0), only)
    assert store.delete_all(scope) == 2
    assert store.list_memories(scope, include_deleted=True) == []
    assert store.similar_memories(scope, [axis(0)]) == [[]]
    assert [m.id for m in store.list_memories(other)] == [theirs.id]
    assert store.delete_all(bare) == 0  # no entities, but its memories go
    assert store.list_memories(bare, include_deleted=True) == [] and store.get_memory(only.id) is None


HOSTILE_METADATA = {
    "city": "東京", "emoji": "party 🎉👩‍👩‍👧", "quote": "O'Brien \"x\" `y`",
    "nested": {"a": [1, 2.5, None, {"b": "ü"}]},
    "list": ["x", 1, True], "empty": {}, "none": None, "big": 2**53, "neg": -0.125, "flag": False,
    "we'ird `key`.$x": "ok",
}  # fmt: skip


def test_memory_text_and_metadata_round_trip_exactly(store: GraphStore, scope: Scope) -> None:
    items = [fact(n, axis(i), metadata=HOSTILE_METADATA) for i, n in enumerate(HOSTILE_NAMES)]
    remember(store, scope, at(0), *items)
    for m in items:
        got = store.get_memory(m.id)
        assert got is not None and got.text == m.text and got.hash == m.hash and got.metadata == HOSTILE_METADATA
    assert sorted(m.text for m in store.list_memories(scope)) == sorted(m.text for m in items)
    found = store.search_memories(scope, mquery(axis(0), "x", filters={"we'ird `key`.$x": "ok", "city": "東京"}))
    assert items[0].id in ids(found)
    for text in ['quimby:"555 AND (x OR', "*?~^\\/[]{}!-+&&||", "   ", ""]:  # query syntax is not for users
        store.search_memories(scope, mquery(axis(0), text))


# --- reset (touches every scope: keep it last) ------------------------------------------------


def test_reset_removes_every_scope(store: GraphStore, scope: Scope) -> None:
    other = fresh_scope()
    _same_world(store, scope)
    _same_world(store, other)
    gone = [fact("Mine", axis(0)), fact("Theirs", axis(0))]
    remember(store, scope, T0, gone[0])
    remember(store, other, T0, gone[1])
    remember(store, other, at(1), forget(gone[1].id))
    store.reset()
    for s in (scope, other):
        assert store.entities(s) == [] and store.get_all(s, include_invalidated=True) == []
        assert store.list_memories(s, include_deleted=True) == [] and store.similar_memories(s, [axis(0)]) == [[]]
    assert [store.get_memory(m.id) for m in gone] == [None, None]
    _same_world(store, scope)  # usable after a reset
    remember(store, scope, at(2), fact("Again", axis(0)))
    assert len(store.get_all(scope)) == 1 and len(store.list_memories(scope)) == 1
