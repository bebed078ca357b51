"""Hybrid retrieval: vector, BM25, name text and graph seeds fused by reciprocal rank."""

from graphmem.retrieval.presets import (
    BM25_ONLY,
    HYBRID,
    HYBRID_CONTEXT,
    HYBRID_RRF,
    PRESETS,
    VECTOR_ONLY,
    SearchPreset,
    get_preset,
)

__all__ = ["BM25_ONLY", "HYBRID", "HYBRID_CONTEXT", "HYBRID_RRF", "PRESETS", "SearchPreset", "VECTOR_ONLY", "get_preset"]
