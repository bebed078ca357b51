"""Hybrid retrieval: vector, BM25, name text and graph seeds fused by reciprocal rank.

Owns search: presets, candidate signals, fusion, reranking, time words. May import the
foundation, the models (llm, stages, embeddings) and stores; never ingest, the facade or an interface.
"""

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
