"""Graph search: seeds by vector, name text and the user's own node, 1-hop relations, fused ranking.

No LLM call: a first-person query seeds the scope's user node directly.
"""

from __future__ import annotations

from datetime import datetime

from graphmem.retrieval.fusion import fuse
from graphmem.retrieval.presets import SearchPreset
from graphmem.retrieval.text import BM25, mentions_self
from graphmem.schema.filters import Filter
from graphmem.stores.base import GraphQuery, GraphStore
from graphmem.types import Relation, Scope, canonical_name


def relation_text(rel: Relation) -> str:
    """What BM25 reads: the triple, or for a relation found through a path, the whole path
    ("me HAS_SISTER Jesica HAS_PET dog" answers "my sister's dog")."""
    steps = rel.path or [{"source": rel.source, "relationship": rel.relationship, "destination": rel.destination}]
    return " ".join(f"{s['source']} {s['relationship']} {s['destination']}" for s in steps)


def search_relations(
    store: GraphStore,
    scope: Scope,
    query: str,
    embedding: list[float],
    preset: SearchPreset,
    limit: int,
    as_of: datetime | None = None,
    known_at: datetime | None = None,
    hops: int = 1,
    filters: Filter | None = None,
) -> list[Relation]:
    seeds = [canonical_name(scope.self_name)] if mentions_self(query) else []
    graph_query = GraphQuery(
        embedding=embedding,
        text=query,
        seed_canonicals=seeds,
        top_k=preset.seed_top_k,
        threshold=preset.seed_threshold,
        as_of=as_of,
        known_at=known_at,
        hops=hops,
        hop_decay=preset.hop_decay,
        filters=filters,
    )
    candidates = store.search_graph(scope, graph_query)
    if not candidates:
        return []
    bm25 = BM25([relation_text(r) for r in candidates]).scores(query)
    signals = {
        "vector": [r.scores.get("vector", 0.0) for r in candidates],
        "fulltext": [r.scores.get("fulltext", 0.0) for r in candidates],
        "seed": [r.scores.get("seed", 0.0) for r in candidates],
        "bm25": bm25,
    }
    fused = fuse(signals, preset.weights, preset.fusion, k=preset.rrf_k)
    for rel, score, b in zip(candidates, fused, bm25, strict=False):
        rel.scores["bm25"] = b
        rel.score = score
    ranked = [r for r in candidates if (r.score or 0) > 0]
    ranked.sort(key=lambda r: (-(r.score or 0), r.created_at.timestamp() if r.created_at else 0.0))
    return ranked[:limit]
