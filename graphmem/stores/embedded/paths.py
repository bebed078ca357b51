"""The embedded store's graph expansion for search: relations one hop from the seed entities and,
with ``hops=2``, two hops (the time filter on every relation of the path), scores decayed per hop.
Mirrors search_graph.cypher."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from graphmem.stores.embedded.graph import Attrs, MemoryGraph
from graphmem.stores.embedded.pool import Pool
from graphmem.types import Relation

SIGNALS = ("fulltext", "seed")  # per seed; the fact cosine ("vector") is the relation's own, set by the store


@dataclass
class _Found:
    edge: Attrs
    hops: int
    path: list[Attrs]
    scores: dict[str, float] = field(default_factory=lambda: dict.fromkeys(SIGNALS, 0.0))


def expand(g: MemoryGraph, seeds: dict[str, dict[str, float]], hops: int, decay: float, pool: Pool) -> list[Relation]:
    """Relations around ``seeds`` (entity id -> its seed scores), best seed scores per relation; per
    seed only the ``pool``'s share of its relations and paths (a path's first hop comes with it)."""
    found: dict[str, _Found] = {}
    ids = pool.index.ids

    def edge(row: int) -> Attrs:
        d = g.edge(ids[row])
        assert d is not None
        return d

    for seed, scores in seeds.items():
        rows = pool.around(seed)
        for r in pool.relations(rows):
            _keep(found, edge(r), 1, [edge(r)], scores, 1.0)
        if hops < 2:
            continue
        first, last = _two_hops(pool, seed, rows)
        for i in pool.paths(first, last):
            d, d2 = edge(first[i]), edge(last[i])
            _keep(found, d, 1, [d], scores, 1.0)
            _keep(found, d2, 2, [d, d2], scores, decay)
    out = []
    for f in sorted(found.values(), key=lambda f: (f.edge["created_at"], f.edge["_seq"])):  # oldest first
        rel = g.relation(f.edge, f.scores)
        if f.hops > 1:
            rel.hops, rel.path = f.hops, [_step(g, e) for e in f.path]
        out.append(rel)
    return out


def _two_hops(pool: Pool, seed: str, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The seed's visible two-hop paths to an entity other than the seed, as (first hop rows, last
    hop rows)."""
    ends = pool.index.ends
    first: list[np.ndarray] = []
    last: list[np.ndarray] = []
    for r in rows:
        mid = _other(ends[r], seed)
        nxt = pool.around(mid)
        nxt = nxt[[r2 != r and _other(ends[r2], mid) != seed for r2 in nxt]] if len(nxt) else nxt
        first.append(np.full(len(nxt), r, dtype=np.int64))
        last.append(nxt)
    if not first:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    return np.concatenate(first), np.concatenate(last)


def _other(ends: tuple[str, str], entity: str) -> str:
    return ends[1] if ends[0] == entity else ends[0]


def _keep(found: dict[str, _Found], d: Attrs, hops: int, path: list[Attrs], scores: dict[str, float], factor: float) -> None:
    f = found.get(d["id"])
    if f is None or hops < f.hops:
        kept = f.scores if f else dict.fromkeys(SIGNALS, 0.0)
        f = found[d["id"]] = _Found(d, hops, path, kept)
    for name in SIGNALS:
        f.scores[name] = max(f.scores[name], scores.get(name, 0.0) * factor)


def _step(g: MemoryGraph, d: Attrs) -> dict[str, str]:
    nodes = g.graph.nodes
    return {"source": nodes[d["source_id"]]["name"], "relationship": d["type"], "destination": nodes[d["destination_id"]]["name"]}
