"""The store contract's relation pool (GraphQuery.relation_pool), on every store: per seed, search
reads only the relations closest to the query by fact cosine plus those whose fact holds a query
term, chosen in the store, so a hub of many relations costs a bounded pool.

The hub "hub" holds 30 relations; relation i has fact cosine 0.10 + 0.02 * i to the query (axis F),
so the best are the last ones. No entity lies near the query: only the named seed brings relations,
and ``fact_top_k=0`` keeps the scope-wide fact candidates out.
"""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from graphmem.schema.filters import parse
from graphmem.stores.base import GraphStore
from graphmem.types import Invalidation, RelationWrite, Scope, sanitize_relation_type
from tests.contract.test_store_contract import T0, add, at, axis, entity, query, tilted

UTC = timezone.utc
F = 10  # the query's axis
N = 30


def cosine(i: int) -> float:
    return round(0.10 + 0.02 * i, 2)


def fact_rel(src, rel_type: str, dst, cos: float, fact: str, other: int) -> RelationWrite:
    r = RelationWrite(src.id, sanitize_relation_type(rel_type), dst.id, T0)
    r.fact, r.fact_embedding = fact, tilted(F, other, cos)
    return r


@pytest.fixture
def hub(store: GraphStore, scope: Scope):
    """hub -[LIKES|OWNS]-> thing i (i even: LIKES), fact "hub likes thing i"; thing 3's fact also
    names a violin and a bow, thing 4's a violin only."""
    me = entity("hub", axis(20))
    things = [entity(f"thing {i}", axis(30 + i), "object") for i in range(N)]
    rels = []
    for i, t in enumerate(things):
        kind = "likes" if i % 2 == 0 else "owns"
        text = {3: "hub owns thing 3, a violin with its bow", 4: "hub likes thing 4, an old violin"}.get(i, f"hub {kind} thing {i}")
        rels.append(fact_rel(me, kind, t, cosine(i), text, 100 + i))
    add(store, scope, T0, [me, *things], rels)
    return me, things


def found(store: GraphStore, scope: Scope, **options) -> list[str]:
    return sorted((r.destination for r in store.search_graph(scope, query(axis(F), seeds=["hub"], fact_top_k=0, **options))),
                  key=lambda name: int(name.split()[-1]))


def test_the_pool_keeps_a_seeds_closest_relations_by_fact(store: GraphStore, scope: Scope, hub) -> None:
    assert found(store, scope, relation_pool=5) == [f"thing {i}" for i in range(N - 5, N)]
    assert len(found(store, scope)) == N  # no pool: every relation of the seed


def test_fact_text_matches_join_the_pool_most_terms_first(store: GraphStore, scope: Scope, hub) -> None:
    best = [f"thing {i}" for i in range(N - 3, N)]
    assert found(store, scope, relation_pool=3, fact_terms=["violin"]) == ["thing 3", "thing 4", *best]
    assert found(store, scope, relation_pool=1, fact_terms=["violin", "bow"]) == ["thing 3", "thing 29"]
    assert found(store, scope, relation_pool=3, fact_terms=["harp"]) == best


def test_the_pool_is_chosen_among_the_relations_visible_then_and_filtered(store: GraphStore, scope: Scope, hub) -> None:
    me, things = hub
    (best,) = [r for r in store.get_all(scope) if r.destination == f"thing {N - 1}"]
    add(store, scope, at(60), invalidations=[Invalidation(best.id, at(60))])
    now = [f"thing {i}" for i in range(N - 4, N - 1)]
    assert found(store, scope, relation_pool=3) == now
    assert found(store, scope, relation_pool=3, as_of=datetime(2024, 1, 1, 12, 30, tzinfo=UTC)) == [f"thing {i}" for i in range(N - 3, N)]
    likes = parse({"relationship": "LIKES"})
    assert found(store, scope, relation_pool=3, filters=likes) == [f"thing {i}" for i in (N - 6, N - 4, N - 2)]


def test_two_hop_paths_are_pooled_with_their_first_hop(store: GraphStore, scope: Scope) -> None:
    """ana KNOWS 12 people (fact cosine 0.1), each of whom PLAYS one instrument (cosine 0.2 + 0.05 j):
    a pool of 2 keeps the 2 best paths, each with the KNOWS relation leading to it."""
    ana = entity("ana", axis(20))
    people = [entity(f"friend {j}", axis(40 + j)) for j in range(12)]
    tools = [entity(f"instrument {j}", axis(60 + j), "object") for j in range(12)]
    rels = [fact_rel(ana, "knows", p, 0.1, f"ana knows friend {j}", 100 + j) for j, p in enumerate(people)]
    rels += [fact_rel(p, "plays", t, round(0.2 + 0.05 * j, 2), f"friend {j} plays instrument {j}", 150 + j)
             for j, (p, t) in enumerate(zip(people, tools, strict=True))]
    add(store, scope, T0, [ana, *people, *tools], rels)
    got = store.search_graph(scope, query(axis(F), seeds=["ana"], fact_top_k=0, hops=2, relation_pool=2))
    two = {(r.source, r.destination) for r in got if r.hops == 2}
    assert two == {("friend 10", "instrument 10"), ("friend 11", "instrument 11")}
    one = {r.destination for r in got if r.hops == 1}
    assert {"friend 10", "friend 11"} <= one and len(one) <= 4  # the pooled KNOWS (2, ties oldest) and the paths' first hops
