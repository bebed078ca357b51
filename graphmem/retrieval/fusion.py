"""Fusing several per-signal scores into one: reciprocal-rank fusion or normalised score sum."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def rrf(signals: Mapping[str, Sequence[float]], weights: Mapping[str, float], k: int = 60) -> list[float]:
    """Sum over signals of weight / (k + rank). Ranks are 1-based and shared by ties (so the
    candidates' order never decides); an item scoring <= 0 on a signal gets nothing from it."""
    n = _length(signals)
    fused = [0.0] * n
    for name, scores in signals.items():
        weight = weights.get(name, 0.0)
        if not weight:
            continue
        ranked = sorted((i for i in range(n) if scores[i] > 0), key=lambda i: -scores[i])
        rank, previous = 0, None
        for position, i in enumerate(ranked, start=1):
            if scores[i] != previous:
                rank, previous = position, scores[i]
            fused[i] += weight / (k + rank)
    return fused


def score_sum(signals: Mapping[str, Sequence[float]], weights: Mapping[str, float]) -> list[float]:
    """Sum over signals of weight * score / best score of that signal (negative scores count 0).

    Unlike RRF it keeps how far ahead a candidate is: an exact rare-name match that doubles every
    other BM25 score is not flattened into "rank 1 vs rank 2".
    """
    n = _length(signals)
    fused = [0.0] * n
    for name, scores in signals.items():
        weight = weights.get(name, 0.0)
        best = max((s for s in scores if s > 0), default=0.0)
        if not weight or best <= 0:
            continue
        for i, s in enumerate(scores):
            if s > 0:
                fused[i] += weight * s / best
    return fused


def fuse(signals: Mapping[str, Sequence[float]], weights: Mapping[str, float], method: str, k: int = 60) -> list[float]:
    return rrf(signals, weights, k) if method == "rrf" else score_sum(signals, weights)


def _length(signals: Mapping[str, Sequence[float]]) -> int:
    return len(next(iter(signals.values()))) if signals else 0
