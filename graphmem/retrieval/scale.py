"""Thresholds on the embedder's own scale: graphmem states them as relative similarities
(0 = unrelated, 1 = identical: MiniLM's cosine) and each model maps them (Embedder.cosine_for)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphmem.embeddings.base import Embedder
    from graphmem.retrieval.presets import SearchPreset


def on_scale(preset: SearchPreset, threshold: float | None, embedder: Embedder) -> tuple[SearchPreset, float | None]:
    """The preset with its seed threshold, and the search threshold, as this model's cosines; the
    floor its fusion measures cosines from (the query floor; for memory facts Embedder.ranking_floor)."""
    if embedder.query_floor:  # both compare the query's vector with stored ones
        preset = replace(preset, seed_threshold=embedder.cosine_for(preset.seed_threshold, query=True),
                         vector_floor=embedder.query_floor)
        threshold = None if threshold is None else embedder.cosine_for(threshold, query=True)
    floor = embedder.ranking_floor()
    if floor != embedder.query_floor and 0.0 <= floor < 1.0:  # memories only: relations keep the query floor
        preset = replace(preset, memory_vector_floor=floor)
    return preset, threshold
