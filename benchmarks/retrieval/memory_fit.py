"""The memory half of the leave-one-dataset-out report: rules, their grids, and the figure of a
setting on a dataset (recall@10 on captured pools, ranked by graphmem's own retrieval.memories._rank)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks.retrieval.lodo import Setting, Space, setting_dict
from benchmarks.retrieval.memory_pools import MemoryCase, recall
from graphmem.retrieval.presets import SearchPreset

#: every rule of memory ranking the default may use; the first value of each is "off"
SPACE = Space({
    "bm25": (0.0, 0.25, 0.5, 1.0),
    "time": (0.0, 0.25, 0.5),
    "context": (0.0, 0.1, 0.25),
    "session": (0.0, 0.1),
    "speaker": (0.0, 0.1),
    "diversity": (0.0, 0.3),
    "fusion": ("adaptive", "score"),
    "bm25_b": (0.5, 0.75),
    "anchor": (0.0, 3.0, 2.0, 1.5),
}, guards=(("anchor", 2.0), ("anchor", 1.5)))
#: today's default (retrieval.presets.HYBRID) in these terms
TODAY: Setting = (("bm25", 1.0), ("time", 0.5), ("context", 0.25), ("session", 0.1), ("speaker", 0.1), ("diversity", 0.3),
                  ("fusion", "adaptive"), ("bm25_b", 0.5), ("anchor", 0.0))
BM25_ONLY = SearchPreset("bm25", {"bm25": 1.0})


def preset_of(setting: Setting) -> SearchPreset:
    s = setting_dict(setting)
    weights = {"vector": 1.0, **{k: s[k] for k in ("bm25", "time") if s[k]}}
    return SearchPreset("fitted", weights, fusion=s["fusion"], context=s["context"], neighbours=1 if s["context"] else 0,
                        session=s["session"], speaker=s["speaker"], diversity=s["diversity"], bm25_b=s["bm25_b"], anchor=s["anchor"])


class MemoryMeasure:
    def __init__(self, cases: dict[tuple[str, str], list[MemoryCase]]) -> None:
        # LOCOMO's metric counts categories 1-4 (benchmarks.locomo.MAIN_CATEGORIES): 5 is adversarial
        self.cases = {key: [c for c in found if c.category != "5"] for key, found in cases.items()}

    def of_preset(self, preset: SearchPreset, dataset: str, embedder: str) -> float:
        got = [recall(c, c.rank(preset)) for c in self.cases[(dataset, embedder)]]
        return sum(got) / len(got) if got else 0.0

    def __call__(self, setting: Setting, dataset: str, embedder: str) -> float:
        return self.of_preset(preset_of(setting), dataset, embedder)


def describe(setting: Setting) -> str:
    off = dict(SPACE.start())
    on = [f"{k}={v}" for k, v in setting if v != off[k]]
    return ", ".join(on) or "vector alone"


def rows(measure: MemoryMeasure, table: Any, chosen: dict[str, Setting], datasets: Sequence[str], embedders: Sequence[str]) -> list[list[Any]]:
    plain = SPACE.start()
    out = []
    for d in datasets:
        for e in embedders:
            held = table.figure(chosen[d], d, e)
            vector = table.figure(plain, d, e)
            bm25 = measure.of_preset(BM25_ONLY, d, e)
            out.append([d, e, round(table.figure(TODAY, d, e), 3), round(held, 3), round(vector, 3), round(bm25, 3),
                        round(held - max(vector, bm25), 3)])
    return out
