"""The relation half of the leave-one-dataset-out report: rules, their grids, and the figure of a
setting on a dataset (benchmarks.retrieval.relation_fast on captured pools)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from benchmarks.retrieval import relation_fast as fast
from benchmarks.retrieval.lodo import Setting, Space, replaced, setting_dict
from benchmarks.retrieval.pools import RelationCase
from benchmarks.retrieval.relation_eval import ranked_ids, score_case
from graphmem.retrieval.presets import HYBRID, SearchPreset

#: every rule of relation ranking the default may use; the first value of each is "off"
SPACE = Space({
    "name_left_out": (False, True),
    "hubness": (0.0, 0.75),
    "bm25": (0.0, 0.1, 0.25, 0.5, 1.0),
    "fulltext": (0.0, 0.1, 0.25, 0.5),
    "seed": (0.0, 0.1, 0.25, 0.5, 1.0),
    "selective_seed": (False, True),
    "path": (0.0, 0.25, 0.5, 1.0),
    "spread": (0.0, 0.15, 0.35),
    "fusion": ("adaptive", "score"),
    "anchor": (0.0, 3.0, 2.0, 1.5),
    "words_need_a_name": (False, True),
}, guards=(("words_need_a_name", True), ("anchor", 2.0), ("anchor", 1.5)))
#: the shipped default (retrieval.presets.HYBRID, schema.facts.NAME_LEFT_OUT) in these terms
TODAY: Setting = (("name_left_out", False), ("hubness", 0.0), ("bm25", 0.5), ("fulltext", 0.0), ("seed", 0.0), ("selective_seed", False),
                  ("path", 0.25), ("spread", 0.0), ("fusion", "adaptive"), ("anchor", 0.0), ("words_need_a_name", False))


#: the single signals: the fact vector, the user's own relations embedded with the other end's name
#: (the fact as it reads) or with its type in place of the name (schema.facts.fact_meaning)
SINGLES: tuple[Setting, ...] = (SPACE.start(), replaced(SPACE.start(), "name_left_out", True))


class RelationMeasure:
    def __init__(self, cases: dict[tuple[str, str], list[RelationCase]], floors: dict[str, float]) -> None:
        self.cases = cases
        self.floors = floors
        self._features: dict[tuple[str, str, tuple[float, bool]], list[fast.Features]] = {}

    def features(self, dataset: str, embedder: str, pool: tuple[float, bool]) -> list[fast.Features]:
        """``pool``: (hubness, name_left_out), the store-side rules a captured pool carries."""
        key = (dataset, embedder, pool)
        if key not in self._features:
            self._features[key] = [fast.features(c, pool, self.floors[embedder]) for c in self.cases[(dataset, embedder)]]
        return self._features[key]

    def slices(self, setting: Setting, dataset: str, embedder: str) -> dict[str, float]:
        s = setting_dict(setting)
        weights = {"vector": 1.0, "bm25": s["bm25"], "fulltext": s["fulltext"], "seed": s["seed"], "path": s["path"]}
        selective = ("seed",) if s["selective_seed"] else ()
        got: dict[str, list[float]] = defaultdict(list)
        for case, f in zip(self.cases[(dataset, embedder)], self.features(dataset, embedder, pool_of(s)), strict=True):
            got[case.slice].append(score_case(case, fast.rank(f, weights, s["fusion"], s["spread"], selective, s["anchor"], s["words_need_a_name"])))
        return {k: sum(v) / len(v) for k, v in sorted(got.items())}

    def __call__(self, setting: Setting, dataset: str, embedder: str) -> float:
        return macro(self.slices(setting, dataset, embedder))

    def single(self, dataset: str, embedder: str) -> float:
        """The best single signal's figure: the floor every eligible setting must reach."""
        return max(self(s, dataset, embedder) for s in SINGLES)

    def baseline_slices(self, dataset: str, embedder: str) -> dict[str, float]:
        got: dict[str, list[float]] = defaultdict(list)
        for case in self.cases[(dataset, embedder)]:
            got[case.slice].append(score_case(case, case.baseline))
        return {k: sum(v) / len(v) for k, v in sorted(got.items())}


def pool_of(s: dict[str, Any]) -> tuple[float, bool]:
    return (s["hubness"], s["name_left_out"])


def macro(slices: dict[str, float]) -> float:
    return sum(slices.values()) / len(slices) if slices else 0.0


def describe(setting: Setting) -> str:
    off = dict(SPACE.start())
    on = [f"{k}={v}" for k, v in setting if v != off[k]]
    return ", ".join(on) or "fact vector alone"


def rows(measure: RelationMeasure, chosen: dict[str, Setting], datasets: Sequence[str], embedders: Sequence[str]) -> list[list[Any]]:
    out = []
    for d in datasets:
        for e in embedders:
            held, single = measure(chosen[d], d, e), measure.single(d, e)
            out.append([d, e, round(measure(TODAY, d, e), 3), round(held, 3), *(round(measure(s, d, e), 3) for s in SINGLES),
                        round(macro(measure.baseline_slices(d, e)), 3), round(held - single, 3)])
    return out


ROW_HEADERS = ["left out", "embedder", "default", "held-out", "fact vector (name)", "fact vector (type)", "sentence cosine",
               "held-out - best fact vector"]


def preset_of(setting: Setting, floor: float = 0.0) -> SearchPreset:
    """The setting as graphmem's own preset (the store-side rules aside: the pool carries them; name_left_out
    is schema.facts.NAME_LEFT_OUT)."""
    s = setting_dict(setting)
    weights = {"vector": 1.0, **{k: s[k] for k in ("bm25", "fulltext", "seed", "path") if s[k]}}
    return replace(HYBRID, relation_weights=weights, fusion=s["fusion"], relation_spread=s["spread"], anchor=s["anchor"],
                   selective=("time", "seed") if s["selective_seed"] else ("time",), relation_words_need_a_name=s["words_need_a_name"],
                   relation_hubness=s["hubness"], vector_floor=floor)


def agreement_with_graphmem(measure: RelationMeasure, setting: Setting, dataset: str, embedder: str) -> float:
    """The share of questions whose top 10 here is graphmem's own (retrieval.graph.rank_relations)."""
    s = setting_dict(setting)
    preset = preset_of(setting, measure.floors[embedder])
    cases = measure.cases[(dataset, embedder)]
    same = 0
    for case, f in zip(cases, measure.features(dataset, embedder, pool_of(s)), strict=True):
        weights = {"vector": 1.0, "bm25": s["bm25"], "fulltext": s["fulltext"], "seed": s["seed"], "path": s["path"]}
        mine = fast.rank(f, weights, s["fusion"], s["spread"], ("seed",) if s["selective_seed"] else (), s["anchor"], s["words_need_a_name"])
        same += mine == ranked_ids(case, preset, pool_of(s))
    return same / len(cases) if cases else 1.0
