"""Named, typed search presets so callers and benchmarks can compare retrieval set-ups."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True)
class SearchPreset:
    name: str
    #: weight per signal (vector, bm25, fulltext, seed); a signal with weight 0 is ignored
    weights: dict[str, float] = field(default_factory=dict)
    #: "score": weighted sum of max-normalised scores; "rrf": reciprocal-rank fusion
    fusion: Literal["score", "rrf"] = "score"
    rrf_k: int = 60
    #: memories only: weight of the best fused score among a candidate's neighbours in storage order
    #: (fusion.neighbour_boost); 0 ranks every memory on its own
    context: float = 0.0
    seed_top_k: int = 10
    seed_threshold: float = 0.3


HYBRID = SearchPreset("hybrid", {"vector": 1.0, "bm25": 1.0, "fulltext": 0.5, "seed": 0.5}, context=0.25)
HYBRID_RRF = SearchPreset("hybrid_rrf", {"vector": 1.0, "bm25": 1.0, "fulltext": 0.5, "seed": 0.5}, fusion="rrf")
VECTOR_ONLY = SearchPreset("vector", {"vector": 1.0})
BM25_ONLY = SearchPreset("bm25", {"bm25": 1.0})

PRESETS = {p.name: p for p in (HYBRID, HYBRID_RRF, VECTOR_ONLY, BM25_ONLY)}


def get_preset(preset: str | SearchPreset | None) -> SearchPreset:
    from graphmem.errors import InvalidInputError

    if preset is None:
        return HYBRID
    if isinstance(preset, SearchPreset):
        return preset
    try:
        return PRESETS[preset]
    except KeyError:
        raise InvalidInputError(f"unknown search preset {preset!r}; choose one of {', '.join(PRESETS)}") from None
