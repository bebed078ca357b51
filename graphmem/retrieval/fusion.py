"""Fusing several per-signal scores into one: reciprocal-rank fusion, normalised score sum, or the
adaptive sum (the default) that decides per query from the candidates: the words' weight by their
agreement with the meaning, a yes/no signal by how selective it is; cosines come in relative to the
model's floor (any model's cosine scale). Memory facts and relations share it (docs/retrieval.md)."""

from __future__ import annotations

import math
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


#: signals that match words: their weight is scaled by their agreement with the vector signal ("adaptive")
LEXICAL = ("bm25", "fulltext")
#: how many of a lexical signal's best candidates are looked at for agreement with the vector signal
AGREE_TOP = 5
#: signals weighed by how few candidates carry them ("adaptive": fusion.selectivity); a preset's
#: ``selective`` names its own (relations may add ``seed``: a first-person question seeds every
#: relation of the user, and a signal every candidate carries tells them nothing apart)
SELECTIVE = ("time",)


def fuse(signals: Mapping[str, Sequence[float]], weights: Mapping[str, float], method: str, k: int = 60,
         selective: Sequence[str] = SELECTIVE) -> list[float]:
    if method == "rrf":
        return rrf(signals, weights, k)
    if method == "adaptive":
        return adaptive(signals, weights, selective)
    return score_sum(signals, weights)


def adaptive(signals: Mapping[str, Sequence[float]], weights: Mapping[str, float], selective: Sequence[str] = SELECTIVE) -> list[float]:
    """``score_sum`` with the lexical weights of ``adaptive_weights``, and a yes/no signal
    (``SELECTIVE``: time) counted as far as it is selective on this query (``selectivity``). Other
    signals (seed, path, ...) are fused as ``score_sum`` fuses them, with their weight. The vector
    signal comes in as relative similarities (``relative``: the caller maps the model's cosines with
    its floor), so a model with a compressed cosine scale counts as much as MiniLM.

    A min-max spread of the cosines over the candidates was tried (it made bge's scale count too) and
    not kept: the candidate with the lowest cosine got nothing from the meaning, so an exact rare
    name ("Quimby: 555-0192") lost to long near-misses, and a one-memory search returned nothing.
    """
    scaled = adaptive_weights(signals, weights)
    for name in selective:
        if name in signals and scaled.get(name):
            scaled[name] *= selectivity(signals[name])
    fused = [0.0] * _length(signals)
    for name, scores in signals.items():
        weight = scaled.get(name, 0.0)
        if not weight:
            continue
        for i, value in enumerate(by_best(scores)):
            fused[i] += weight * value
    return fused


def relative(cosines: Sequence[float], floor: float) -> list[float]:
    """Cosines on the model's own scale as relative similarities (0: unrelated, 1: identical):
    (cosine - floor) / (1 - floor), the inverse of Embedder.cosine_for. A model with a compressed
    scale (bge-small: unrelated at 0.34-0.43) otherwise keeps most of its score for every candidate
    and its better meaning is outvoted by the words; MiniLM's floor is 0 and nothing changes. A
    cosine below the floor counts 0 in the fusion (memories._rank still lists such a candidate,
    nearest first, after every scored one when the preset weighs the meaning)."""
    if not floor or floor >= 1.0:
        return list(cosines)
    return [(c - floor) / (1.0 - floor) for c in cosines]


def selectivity(scores: Sequence[float]) -> float:
    """The share of the candidates that do NOT carry the signal (1: one does; 0: all do).

    Why: "when ..." questions give the time signal to every candidate that names a time. Among
    short chat turns few do and the signal picks the answer; in a coding chat most long answers name
    a version, a date or a deadline, and a signal every candidate carries only reorders them at
    random (BEAM dev: "What time is our next meeting scheduled for?" lost its answer to a long message
    with a date in it; LOCOMO dev unchanged)."""
    if not scores:
        return 0.0
    return 1.0 - sum(1 for s in scores if s > 0) / len(scores)


def by_best(scores: Sequence[float]) -> list[float]:
    """Each score over the best one (negative scores count 0), as ``score_sum`` weighs it."""
    best = max((s for s in scores if s > 0), default=0.0)
    return [max(s, 0.0) / best if best > 0 else 0.0 for s in scores]


def adaptive_weights(signals: Mapping[str, Sequence[float]], weights: Mapping[str, float]) -> dict[str, float]:
    """The preset's weights, each lexical signal's scaled by its ``agreement`` with the vector signal.

    Why: a word match is strong evidence when the meaning confirms it. In a chat of long code
    answers, a question's generic words ("code", "service", "format") match long documents about
    something else, and a max-normalised BM25 then outvotes the cosine of the one short turn that
    answers it. The vector signal is the anchor: a cosine means the same across queries, a BM25
    score does not. When the lexical head is also the semantic head, the weight stays whole.
    """
    out = dict(weights)
    vector = signals.get("vector")
    if vector is None or not weights.get("vector"):
        return out
    for name in LEXICAL:
        if name in signals and out.get(name):
            out[name] = out[name] * agreement(signals[name], vector)
    return out


def agreement(lexical: Sequence[float], vector: Sequence[float], top: int = AGREE_TOP) -> float:
    """In [0, 1]: the best min-max-normalised cosine (over these candidates) among the lexical
    signal's ``top`` best candidates. 1: one of the words' best is also the meaning's best; near 0:
    the words found only what the meaning ranks last. 0 when nothing matches a word; 1 when the
    cosines cannot tell candidates apart (no evidence against the words)."""
    order = sorted((i for i, s in enumerate(lexical) if s > 0), key=lambda i: -lexical[i])[:top]
    if not order:
        return 0.0
    low, high = min(vector), max(vector)
    if high <= low:
        return 1.0
    return max((vector[i] - low) / (high - low) for i in order)


def _length(signals: Mapping[str, Sequence[float]]) -> int:
    return len(next(iter(signals.values()))) if signals else 0


def keep_anchor(fused: Sequence[str], anchor: Sequence[str], factor: float, limit: int) -> list[str]:
    """``fused`` (ids, best first) cut to ``limit``, with each of the anchor signal's own best kept
    within ``factor`` times its anchor rank: the anchor's r-th best is placed by position
    ``ceil(factor * r)`` at the latest (earlier when the fusion ranks it higher); 0: ``fused`` as it is.

    Why (safety over averaging, docs/retrieval.md "The anchor"): a fusion that helps on average can
    bury, on one query, what its strongest signal alone would have found; the signals disagree and
    nothing tells them apart. With the anchor kept this way the default finds at every cut-off k at
    least what the anchor alone finds at k / factor, whatever the other signals say, and where they
    agree with it nothing moves.
    """
    if factor <= 0:
        return list(fused[:limit])
    due = [(math.ceil(factor * rank), item) for rank, item in enumerate(anchor[:limit], start=1)]
    out: list[str] = []
    placed: set[str] = set()
    f = a = 0
    while len(out) < limit:
        while a < len(due) and due[a][1] in placed:
            a += 1
        while f < len(fused) and fused[f] in placed:
            f += 1
        if a < len(due) and (due[a][0] <= len(out) + 1 or f >= len(fused)):
            item = due[a][1]
        elif f < len(fused):
            item = fused[f]
        else:
            break
        out.append(item)
        placed.add(item)
    return out
