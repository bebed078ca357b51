"""A vectorised copy of retrieval.graph.rank_relations for fitting: each case's signals computed
once (numpy arrays), so one setting of the rules ranks a case in microseconds. ``check`` proves it
ranks as graphmem does (the same top 10 as rank_relations) before any figure is trusted."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from benchmarks.retrieval.pools import RelationCase
from graphmem.retrieval import fusion
from graphmem.retrieval.graph import joined_seeds, names_an_entity, relation_signals

K = 10


@dataclass
class Features:
    ids: list[str]
    signals: dict[str, np.ndarray]
    kinds: list[tuple[str, str]]
    created: np.ndarray
    extra: dict[str, np.ndarray] = field(default_factory=dict)
    named: bool = True

    def __post_init__(self) -> None:
        codes: dict[tuple[str, str], int] = {}
        self.kind_codes = np.asarray([codes.setdefault(k, len(codes)) for k in self.kinds], dtype=int)


def features(case: RelationCase, key: tuple[float, bool], floor: float) -> Features:
    """``key``: which captured pool, (hubness, name_left_out)."""
    pool = case.pools[key]
    signals = relation_signals(pool, case.question)
    signals["seed"] = joined_seeds(pool, signals["seed"], case.question, case.self_name)
    signals["vector"] = fusion.relative(signals["vector"], floor)
    return Features([r.id for r in pool], {k: np.asarray(v, dtype=float) for k, v in signals.items()},
                    [(r.source_id, r.relationship) for r in pool],
                    np.asarray([r.created_at.timestamp() if r.created_at else 0.0 for r in pool]),
                    named=names_an_entity(pool, case.question))


def _by_best(x: np.ndarray) -> np.ndarray:
    pos = np.maximum(x, 0.0)
    best = pos.max() if len(pos) else 0.0
    return pos / best if best > 0 else np.zeros_like(x)


def _agreement(lexical: np.ndarray, vector: np.ndarray, top: int = fusion.AGREE_TOP) -> float:
    idx = np.flatnonzero(lexical > 0)
    if not len(idx):
        return 0.0
    order = idx[np.argsort(-lexical[idx], kind="stable")][:top]
    low, high = vector.min(), vector.max()
    if high <= low:
        return 1.0
    return float(((vector[order] - low) / (high - low)).max())


def fuse(f: Features, weights: Mapping[str, float], method: str, selective: Sequence[str] = ()) -> np.ndarray:
    scaled = dict(weights)
    if method == "adaptive" and "vector" in f.signals and weights.get("vector"):
        for name in fusion.LEXICAL:
            if name in f.signals and scaled.get(name):
                scaled[name] *= _agreement(f.signals[name], f.signals["vector"])
    if method == "adaptive":
        for name in selective:
            if name in f.signals and scaled.get(name):
                scaled[name] *= fusion.selectivity(list(f.signals[name]))
    out = np.zeros(len(f.ids))
    for name, w in scaled.items():
        if w and name in f.signals:
            out += w * _by_best(f.signals[name])
    return out


def rank(f: Features, weights: Mapping[str, float], method: str = "adaptive", spread: float = 0.0,
         selective: Sequence[str] = (), anchor: float = 0.0, words_need_a_name: bool = False) -> list[str]:
    if words_need_a_name and not f.named and (f.signals["vector"] > 0).any():
        weights = {k: (0.0 if k in fusion.LEXICAL else w) for k, w in weights.items()}
    scores = fuse(f, weights, method, selective)
    keep = np.flatnonzero(scores > 0)
    order = keep[np.lexsort((f.created[keep], -scores[keep]))]
    if spread > 0 and len(order):
        codes = f.kind_codes[order]
        by_kind = np.lexsort((np.arange(len(order)), codes))  # positions grouped by kind, in rank order
        starts = np.r_[0, np.flatnonzero(np.diff(codes[by_kind])) + 1]
        before = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
        n = np.empty(len(order), dtype=int)
        n[by_kind] = before
        adjusted = scores[order] * (1 - spread) ** n
        order = order[np.lexsort((np.arange(len(order)), -adjusted))]
    ranked = [f.ids[i] for i in order[:K]]
    if anchor:
        best = np.lexsort((f.created, -f.signals["vector"]))[:K]
        ranked = fusion.keep_anchor(ranked, [f.ids[i] for i in best], anchor, K)
    return ranked
