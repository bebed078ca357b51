"""The store contract's fact scoring with the hubness correction (GraphQuery.fact_embedding,
fact_shift; retrieval.hubness), on every store: a fact that sits close to every question (the
probes' centre, axis H) ranks below a specific one that is a little less close to the question
(axis F), in the scores, the seed's pool and the scope-wide fact candidates; without a correction
the plain cosine still rules.

Facts: "hub" has cosine 0.6 to the question and 0.8 to the centre; "specific" 0.55 to the question
and none to the centre. Corrected with weight 0.5 and floor 0.1: hub 0.6 - 0.5 * (0.8 - 0.1) =
0.25, specific 0.55 + 0.05 = 0.60.
"""

from __future__ import annotations

import math

import pytest

from graphmem.retrieval.hubness import fact_query
from graphmem.stores.base import GraphStore
from graphmem.types import RelationWrite, Scope, sanitize_relation_type
from tests.contract.test_store_contract import T0, TEST_DIMS, add, axis, entity, query

F, H, OTHER = 10, 11, 12  # the question's axis, the probes' centre's axis, a free axis
WEIGHT, FLOOR = 0.5, 0.1


def unit(**parts: float) -> list[float]:
    vec = [0.0] * TEST_DIMS
    for name, value in parts.items():
        vec[{"f": F, "h": H, "o": OTHER}[name]] = value
    rest = 1.0 - sum(v * v for v in vec)
    vec[13] = math.sqrt(max(rest, 0.0))
    return vec


def fact_rel(src, rel_type: str, dst, fact: str, embedding: list[float]) -> RelationWrite:
    r = RelationWrite(src.id, sanitize_relation_type(rel_type), dst.id, T0)
    r.fact, r.fact_embedding = fact, embedding
    return r


@pytest.fixture
def facts(store: GraphStore, scope: Scope) -> None:
    me, pod, boss = entity("me", axis(0)), entity("The Daily", axis(1), "podcast"), entity("Globex", axis(2), "company")
    add(store, scope, T0, [me, pod, boss],
        [fact_rel(me, "follows", pod, "me follows The Daily (podcast)", unit(f=0.6, h=0.8)),
         fact_rel(me, "employed by", boss, "me employed by Globex (company)", unit(f=0.55, o=0.3))])


def corrected(**options: object):
    q = axis(F)
    moved, shift = fact_query(q, axis(H), WEIGHT, FLOOR)
    return query(q, fact_embedding=moved, fact_shift=shift, **options)


def scores(found) -> dict[str, float]:
    return {r.relationship: r.scores["vector"] for r in found}


def test_without_a_correction_the_hub_fact_scores_its_plain_cosine(store: GraphStore, scope: Scope, facts) -> None:
    found = store.search_graph(scope, query(axis(F), seeds=["me"]))
    assert scores(found) == pytest.approx({"FOLLOWS": 0.6, "EMPLOYED_BY": 0.55}, abs=1e-3)


def test_the_corrected_score_puts_the_specific_fact_above_the_hub(store: GraphStore, scope: Scope, facts) -> None:
    found = store.search_graph(scope, corrected(seeds=["me"]))
    assert scores(found) == pytest.approx({"FOLLOWS": 0.25, "EMPLOYED_BY": 0.60}, abs=1e-3)


def test_the_pool_and_the_fact_candidates_rank_by_the_corrected_score(store: GraphStore, scope: Scope, facts) -> None:
    assert [r.relationship for r in store.search_graph(scope, query(axis(F), seeds=["me"], relation_pool=1, fact_top_k=0))] == ["FOLLOWS"]
    assert [r.relationship for r in store.search_graph(scope, corrected(seeds=["me"], relation_pool=1, fact_top_k=0))] == ["EMPLOYED_BY"]
    # no seed: only the scope-wide fact candidates, the best fact_top_k at or above the threshold
    assert [r.relationship for r in store.search_graph(scope, corrected(fact_top_k=1, threshold=0.3))] == ["EMPLOYED_BY"]
    assert [r.relationship for r in store.search_graph(scope, corrected(fact_top_k=5, threshold=0.3))] == ["EMPLOYED_BY"]
    assert [r.relationship for r in store.search_graph(scope, query(axis(F), fact_top_k=5, threshold=0.3))] == ["FOLLOWS", "EMPLOYED_BY"]
