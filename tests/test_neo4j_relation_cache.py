"""Neo4j's cached relation search (stores/neo4j/cached_search.py, scope_cache.py), on the real
server: the client-side ranking returns what search_graph.cypher returns, every write of a scope's
entities or relations moves its version in the write's transaction (so another process's cache
loads again at its next search), scopes never share an entry, and least recently used scopes are
evicted past the size cap."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from conftest import TEST_DIMS
from helpers import graph, make_memory, script

from graphmem.stores.base import GraphQuery, RelationFact
from graphmem.stores.neo4j import Neo4jStore
from graphmem.stores.neo4j.scope_cache import ScopeCache
from graphmem.types import (
    EntityWrite,
    GraphWrite,
    Invalidation,
    RelationWrite,
    Scope,
    canonical_name,
    new_id,
    sanitize_relation_type,
)
from tests.contract.test_store_contract import T0, at

pytestmark = pytest.mark.neo4j

KINDS = ["likes", "owns", "knows", "lives in", "works at", "plays"]


def vec(rng: random.Random) -> list[float]:
    v = [rng.gauss(0.0, 1.0) for _ in range(TEST_DIMS)]
    norm = sum(x * x for x in v) ** 0.5
    return [x / norm for x in v]


def near(base: list[float], rng: random.Random, noise: float) -> list[float]:
    v = [b + noise * x for b, x in zip(base, vec(rng), strict=True)]
    norm = sum(x * x for x in v) ** 0.5
    return [x / norm for x in v]


def ent(name: str, embedding: list[float], kind: str = "thing") -> EntityWrite:
    return EntityWrite(new_id(), name, canonical_name(name), kind, embedding, True)


def build(store: Neo4jStore, scope: Scope, seed: int = 7, n: int = 60) -> dict[str, object]:
    """A user hub ("me") with ``n`` relations of several kinds (facts near a few topics, some
    without a fact, some retired later, some valid only from a later time), and relations between
    the others: the shapes search_graph.cypher's seeds, pools, time filter and fact candidates see."""
    rng = random.Random(seed)
    topics = [vec(rng) for _ in range(4)]
    me = ent(scope.self_name, vec(rng), "person")
    others = [ent(f"thing {i}" if i % 5 else f"violin {i}", near(topics[i % 4], rng, 1.5)) for i in range(n)]
    rels = []
    for i, o in enumerate(others):
        r = RelationWrite(me.id, sanitize_relation_type(KINDS[i % len(KINDS)]), o.id, T0 if i % 7 else at(600))
        if i % 9:
            r.fact = f"I {KINDS[i % len(KINDS)]} {o.name}" + (" with a violin bow" if i % 4 == 0 else "")
            r.fact_embedding = near(topics[i % 4], rng, 1.0)
        rels.append(r)
    for i in range(0, n - 1, 3):
        r = RelationWrite(others[i].id, "KNOWS", others[i + 1].id, T0)
        r.fact, r.fact_embedding = f"{others[i].name} knows {others[i + 1].name}", near(topics[(i + 1) % 4], rng, 1.0)
        rels.append(r)
    store.write(GraphWrite(new_id(), scope, T0, [me, *others], rels))
    gone = [r for r in store.get_all(scope) if r.source == me.name][::6]
    store.write(GraphWrite(new_id(), scope, at(60), invalidations=[Invalidation(r.id, at(60)) for r in gone]))
    return {"topics": topics, "me": me, "others": others}


def queries_for(scope: Scope, built: dict[str, object]) -> list[GraphQuery]:
    topics = built["topics"]
    assert isinstance(topics, list)
    rng = random.Random(3)
    me = canonical_name(scope.self_name)
    base = {"relation_pool": 8, "fact_top_k": 5, "threshold": 0.05}
    return [
        GraphQuery(near(topics[0], rng, 0.8), "what do I like?", [me], **base),
        GraphQuery(near(topics[1], rng, 0.8), "violin", [], **base),
        GraphQuery(near(topics[2], rng, 0.8), "who knows the violin 10?", [me], fact_terms=["violin", "bow"], **base),
        GraphQuery(near(topics[3], rng, 0.8), "then", [me], as_of=at(30), **base),
        GraphQuery(near(topics[0], rng, 0.8), "known then", [me], known_at=at(30), **base),
        GraphQuery(near(topics[1], rng, 0.8), "everything", [me], include_invalidated=True, **base),
        GraphQuery(near(topics[2], rng, 0.8), "moved", [me], fact_embedding=near(topics[2], rng, 0.5), fact_shift=-0.1, **base),
        GraphQuery(near(topics[3], rng, 0.8), "no seeds", [], relation_pool=3, fact_top_k=0, threshold=0.99),
    ]


def summary(store: Neo4jStore, scope: Scope, q: GraphQuery) -> list[tuple[str, float, float, float, str | None]]:
    return [(r.id, r.scores["vector"], r.scores["seed"], r.scores["fulltext"], r.fact) for r in store.search_graph(scope, q)]


def cached_summary(store: Neo4jStore, scope: Scope, q: GraphQuery) -> list[tuple[str, float, float, float, str | None]]:
    """The search served from the cache: a version is loaded the second time a search meets it (the
    first search after a write runs search_graph.cypher)."""
    assert store.relation_cache is not None
    held = store.relation_cache.peek(scope.key)
    first = summary(store, scope, q)
    if held is None or store.relation_cache.get(scope.key, held.version) is None:  # met, not loaded: again
        first = summary(store, scope, q)
    assert store.relation_cache.peek(scope.key) is not None, "the second search loads the scope"
    return first


def assert_same(cached: list, plain: list) -> None:
    assert [r[0] for r in cached] == [r[0] for r in plain]
    for a, b in zip(cached, plain, strict=True):
        assert a[1:4] == pytest.approx(b[1:4], abs=1e-4) and a[4] == b[4]


@pytest.fixture
def stores(neo4j_uri):
    """Two stores on one server, as two processes: ``cached`` with the cache, ``plain`` without."""
    cached = Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS, warm_plans=False)
    plain = Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS, warm_plans=False, relation_cache_mb=0)
    cached.setup()
    yield cached, plain
    cached.close()
    plain.close()


def test_the_cached_search_returns_what_the_statement_returns(stores, scope) -> None:
    cached, plain = stores
    built = build(cached, scope)
    assert cached.relation_cache is not None
    first = queries_for(scope, built)[0]
    assert_same(summary(cached, scope, first), summary(plain, scope, first))
    assert cached.relation_cache.keys() == [] and cached.relation_cache.seen(scope.key) is not None  # met: the statement ran
    for q in queries_for(scope, built):
        mine, theirs = summary(cached, scope, q), summary(plain, scope, q)
        assert theirs or q.threshold > 0.9, q.text
        assert_same(mine, theirs)
    assert cached.relation_cache.keys() == [scope.key]
    assert cached.relation_cache.loads == 1  # one load for every later search of an unchanged scope


def test_a_scope_never_written_with_versions_is_searched_by_the_statement(stores, scope, raw_driver) -> None:
    """Data of before the versions (or of a process that predates them): no version, no cache."""
    cached, plain = stores
    built = build(cached, scope)
    raw_driver.execute_query("MATCH (v:ScopeVersion {scope: $s}) DELETE v", s=scope.key)
    q = queries_for(scope, built)[0]
    assert_same(summary(cached, scope, q), summary(plain, scope, q))
    assert cached.relation_cache is not None and cached.relation_cache.keys() == []


def _version(raw_driver, scope: Scope) -> str | None:
    records, _, _ = raw_driver.execute_query("OPTIONAL MATCH (v:ScopeVersion {scope: $s}) RETURN v.version AS v", s=scope.key)
    return records[0]["v"]


def _add_relation(store: Neo4jStore, scope: Scope, built: dict) -> None:
    me, topics = built["me"], built["topics"]
    new = ent("a new thing", topics[0])
    r = RelationWrite(me.id, "LIKES", new.id, T0)
    r.fact, r.fact_embedding = "I like a new thing", topics[0]
    store.write(GraphWrite(new_id(), scope, at(5), [EntityWrite(me.id, me.name, me.canonical, me.entity_type, me.embedding, False), new], [r]))


def _held_add(store: Neo4jStore, scope: Scope, built: dict) -> None:
    with store.scope_lock(scope):  # an add's write in the transaction holding the scope's lock
        _add_relation(store, scope, built)


def _write_many(store: Neo4jStore, scope: Scope, built: dict) -> None:
    me, others = built["me"], built["others"]
    same = EntityWrite(me.id, me.name, me.canonical, me.entity_type, me.embedding, False)
    store.write_many([GraphWrite(new_id(), scope, at(5), [same], [RelationWrite(me.id, "OWNS", others[1].id, T0)])])


def _write_created(store: Neo4jStore, scope: Scope, built: dict) -> None:
    """An import's create-only batch (bulk_graph.py): new entities and their relation."""
    a, b = ent("brand new", built["topics"][1]), ent("another new", built["topics"][2])
    store.write_many([GraphWrite(new_id(), scope, at(5), [a, b], [RelationWrite(a.id, "KNOWS", b.id, T0)])])


def _invalidate(store: Neo4jStore, scope: Scope, built: dict) -> None:
    first = store.get_all(scope)[0]
    store.write(GraphWrite(new_id(), scope, at(90), invalidations=[Invalidation(first.id, at(90))]))


def _attributes(store: Neo4jStore, scope: Scope, built: dict) -> None:
    me = built["me"]
    same = EntityWrite(me.id, me.name, me.canonical, me.entity_type, me.embedding, False)
    same.attributes = {"birthday": "1990-01-01"}
    store.write(GraphWrite(new_id(), scope, at(5), [same]))


def _set_facts(store: Neo4jStore, scope: Scope, built: dict) -> None:
    r = store.get_all(scope)[2]
    store.set_relation_facts(scope, [RelationFact(r.id, r.source_id, "a fact of its own", built["topics"][3])])


WRITES = {
    "add": _add_relation,
    "add under the scope lock": _held_add,
    "write_many": _write_many,
    "import (create-only batch)": _write_created,
    "invalidation": _invalidate,
    "entity attributes": _attributes,
    "set_relation_facts (reindex)": _set_facts,
    "forget_entity": lambda s, scope, b: s.forget_entity(scope, "thing 1", "(?is).*thing 1.*"),
    "forget_scope": lambda s, scope, b: s.forget_scope(scope),
    "delete_all": lambda s, scope, b: s.delete_all(scope),
    "delete_all of a run": lambda s, scope, b: s.delete_all(Scope.of(user_id=scope.user_id, run_id="r1")),
    "reset": lambda s, scope, b: s.reset(),
}


@pytest.mark.parametrize("name", list(WRITES))
def test_every_write_moves_the_version_and_another_instances_next_search_sees_it(stores, scope, raw_driver, name) -> None:
    cached, plain = stores
    built = build(cached, scope)
    q = queries_for(scope, built)[0]
    cached_summary(cached, scope, q)  # loaded into the cache
    before = _version(raw_driver, scope)
    assert before is not None
    WRITES[name](plain, scope, built)  # written by the other instance
    assert _version(raw_driver, scope) != before
    assert_same(summary(cached, scope, q), summary(plain, scope, q))  # the statement: a version met once
    after = _version(raw_driver, scope)
    assert_same(summary(cached, scope, q), summary(plain, scope, q))  # loaded, when the scope has a version
    held = cached.relation_cache.peek(scope.key)
    assert (held is not None and held.version == after) if after is not None else held is None or held.version == before


def test_a_write_through_another_memory_is_seen_by_the_next_search(neo4j_uri, server, uid) -> None:
    reader = make_memory(server, Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS, warm_plans=False), TEST_DIMS)
    writer = make_memory(server, Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS, warm_plans=False), TEST_DIMS)
    try:
        script(server, graph([("tennis", "sport")], [("I", "plays", "tennis")]))
        writer.add("I play tennis", user_id=uid, infer=True)
        for _ in range(2):  # the statement, then the loaded scope
            assert {r["destination"] for r in reader.search("what do I play?", user_id=uid)["relations"]} == {"tennis"}
        assert reader.store.relation_cache.loads == 1
        script(server, graph([("chess", "game")], [("I", "plays", "chess")]))
        writer.add("I play chess too", user_id=uid, infer=True)
        for _ in range(2):
            assert {r["destination"] for r in reader.search("what do I play?", user_id=uid)["relations"]} == {"tennis", "chess"}
        assert reader.store.relation_cache.loads == 2
    finally:
        writer.delete_all(user_id=uid)
        reader.close()
        writer.close()


def test_scopes_never_read_each_others_entries(stores, raw_driver) -> None:
    """Two users with the same names and vectors, and a run of the first: each search returns its
    own partition's relations, from its own entry (the key is the whole scope key)."""
    cached, plain = stores
    one, two = Scope.of(user_id=f"u-{new_id()[:8]}"), Scope.of(user_id=f"u-{new_id()[:8]}")
    built = {s.key: build(cached, s, seed=11) for s in (one, two)}
    for s in (one, two):
        mine = {r.id for r in cached.get_all(s, include_invalidated=True)}
        for q in queries_for(s, built[s.key]):
            found = cached_summary(cached, s, q)
            assert {r[0] for r in found} <= mine
            assert_same(found, summary(plain, s, q))
    assert cached.relation_cache is not None and sorted(cached.relation_cache.keys()) == sorted([one.key, two.key])
    run = Scope.of(user_id=one.user_id, run_id="only-this-run")  # narrows the partition: the statement, not the entry
    assert cached.search_graph(run, queries_for(one, built[one.key])[0]) == []
    for s in (one, two):
        cached.delete_all(s)


def test_least_recently_used_scopes_are_evicted_past_the_cap(neo4j_uri) -> None:
    store = Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS, warm_plans=False)
    scopes = [Scope.of(user_id=f"u-{new_id()[:8]}") for _ in range(3)]
    try:
        built = {s.key: build(store, s, seed=5, n=30) for s in scopes}
        assert store.relation_cache is not None
        def search(s: Scope) -> list:
            return store.search_graph(s, queries_for(s, built[s.key])[0])

        for s in scopes:
            search(s)  # each version met once: the statement
        one = search(scopes[0])
        size = store.relation_cache.nbytes
        store.relation_cache.max_bytes = int(size * 2.2)  # room for two scopes of this size, not three
        for s in scopes[1:]:
            search(s)
        assert store.relation_cache.keys() == [scopes[1].key, scopes[2].key]  # the first, least recent, went
        search(scopes[1])  # now the most recent
        again = search(scopes[0])
        assert store.relation_cache.keys() == [scopes[1].key, scopes[0].key]
        assert [r.id for r in again] == [r.id for r in one] and store.relation_cache.loads == 4
    finally:
        for s in scopes:
            store.delete_all(s)
        store.close()


def test_a_scope_larger_than_the_cap_is_not_kept() -> None:
    cache = ScopeCache(max_bytes=10)
    from graphmem.stores.neo4j.scope_cache import load

    entry = load({"version": "v", "entities": [["e", [1.0, 0.0], "e"]], "relations": []}, 2)
    cache.put("scope", entry)
    assert cache.keys() == [] and cache.get("scope", "v") is None


def test_times_compare_to_the_microsecond_over_every_valid_year() -> None:
    from datetime import datetime, timezone

    from graphmem.stores.neo4j.cached_search import _micros
    from graphmem.stores.neo4j.scope_cache import _micros as stored

    assert _micros(T0 + timedelta(microseconds=1)) - _micros(T0) == 1
    assert _micros(T0.replace(year=1960)) < 0
    for when in (datetime(1, 1, 1, tzinfo=timezone.utc), datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=timezone.utc), T0):
        seconds, micro = divmod(_micros(when), 1_000_000)
        assert stored([seconds, micro * 1000], 0) == _micros(when)  # as Neo4j returns it: [epochSeconds, nanosecond]
