"""Scoring a relation ranking on captured pools (benchmarks.retrieval.pools) with graphmem's own
ranking code: hit@k of the whole gold per slice."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from benchmarks.retrieval.pools import RelationCase
from graphmem.retrieval.graph import rank_relations
from graphmem.retrieval.presets import SearchPreset

K = 10
#: the figure each slice reports: hit@5 of the answer for single-relation questions, hit@10 of the
#: whole gold path for multi-hop ones (the held-out reports' metrics)
SLICE_K = {"paraphrase": 5, "shared": 5, "as_of": 5, "other": 5, "multihop": 10}


def position(found: Sequence[str], gold: Sequence[str]) -> int | None:
    where = [list(found).index(g) + 1 for g in gold if g in found]
    return max(where) if len(where) == len(gold) else None


def path_recall(found: Sequence[str], gold: Sequence[str]) -> float:
    return sum(1 for g in gold if g in found) / len(gold)


def ranked_ids(case: RelationCase, preset: SearchPreset, key: tuple[float, bool]) -> list[str]:
    # rank_relations reads the store's signals (vector, seed, fulltext) and writes its own (bm25,
    # path, fused, score): the pool is reused as it is, not copied (a copy per ranking was most of the time)
    return [r.id for r in rank_relations(list(case.pools[key]), case.question, preset, K, case.self_name)]


def score_case(case: RelationCase, found: Sequence[str]) -> float:
    """The case's figure: hit@k (0/1) of the whole gold; path recall@10 for multi-hop."""
    if case.slice == "multihop":
        return path_recall(list(found)[:K], case.gold)
    pos = position(found, case.gold)
    return 1.0 if pos is not None and pos <= SLICE_K[case.slice] else 0.0


def by_slice(cases: Sequence[RelationCase], order: Callable[[RelationCase], Sequence[str]]) -> dict[str, float]:
    got: dict[str, list[float]] = defaultdict(list)
    for case in cases:
        got[case.slice].append(score_case(case, order(case)))
    return {name: sum(v) / len(v) for name, v in sorted(got.items())}


def mean(scores: dict[str, float]) -> float:
    return sum(scores.values()) / len(scores) if scores else 0.0


def systems(cases: Sequence[RelationCase], default: SearchPreset, default_key: tuple[float, bool]) -> dict[str, dict[str, float]]:
    vector = SearchPreset("vector", {"vector": 1.0})
    return {
        "default": by_slice(cases, lambda c: ranked_ids(c, default, default_key)),
        "fact vector": by_slice(cases, lambda c: ranked_ids(c, vector, (0.0, False))),
        "sentence cosine": by_slice(cases, lambda c: c.baseline),
    }


def with_rules(preset: SearchPreset, **rules: Any) -> SearchPreset:
    return replace(preset, **rules)
