"""Memory-fact search: vector and fulltext candidates from the store, BM25 on them, fused.

The store's fulltext hits only widen the candidate pool: its score is BM25 too, over raw lowercase
tokens, so fusing it beside our BM25 (stopwords, stemming) counted the same word matches twice and
let function words vote (LOCOMO recall@10: 0.677 -> 0.695 without it). It stays in ``scores``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from graphmem.retrieval.fusion import fuse, neighbour_boost
from graphmem.retrieval.presets import SearchPreset
from graphmem.retrieval.text import BM25
from graphmem.stores.base import GraphStore, MemoryQuery
from graphmem.types import MemoryItem, Scope

#: candidates fetched per signal, relative to the requested limit
OVERFETCH = 3


def search_memories(
    store: GraphStore,
    scope: Scope,
    query: str,
    embedding: list[float],
    preset: SearchPreset,
    limit: int,
    filters: dict[str, Any] | None = None,
    as_of: datetime | None = None,
    threshold: float | None = None,
) -> list[MemoryItem]:
    top_k = max(limit * OVERFETCH, 30)
    candidates = store.search_memories(scope, MemoryQuery(embedding, query, top_k=top_k, filters=filters, as_of=as_of))
    if threshold is not None:
        candidates = [m for m in candidates if m.scores.get("vector", 0.0) >= threshold]
    if not candidates:
        return []
    bm25 = BM25([m.text for m in candidates]).scores(query)
    signals = {"vector": [m.scores.get("vector", 0.0) for m in candidates], "bm25": bm25}
    fused = fuse(signals, preset.weights, preset.fusion, k=preset.rrf_k)
    stored = sorted(range(len(candidates)), key=lambda i: _timestamp(candidates[i]))  # stable: ties keep rank order
    boosted = neighbour_boost(fused, stored, preset.context)
    for item, score, own, b in zip(candidates, boosted, fused, bm25, strict=False):
        item.scores["bm25"] = b
        if preset.context:
            item.scores["context"] = score - own
        item.score = score
    ranked = [m for m in candidates if (m.score or 0) > 0]
    ranked.sort(key=lambda m: (-(m.score or 0), -_timestamp(m)))
    return ranked[:limit]


def _timestamp(item: MemoryItem) -> float:
    return item.created_at.timestamp() if item.created_at else 0.0
