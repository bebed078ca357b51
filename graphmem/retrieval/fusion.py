"""Reciprocal-rank fusion of several per-signal scores into one ranking."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def rrf(signals: Mapping[str, Sequence[float]], weights: Mapping[str, float], k: int = 60) -> list[float]:
    """Fused score per item: sum over signals of weight / (k + rank), ranks 1-based.

    An item whose score on a signal is <= 0 gets nothing from that signal (it was not retrieved by it).
    """
    n = len(next(iter(signals.values()))) if signals else 0
    fused = [0.0] * n
    for name, scores in signals.items():
        weight = weights.get(name, 0.0)
        if not weight:
            continue
        order = sorted((i for i in range(n) if scores[i] > 0), key=lambda i: -scores[i])
        for rank, i in enumerate(order, start=1):
            fused[i] += weight / (k + rank)
    return fused
