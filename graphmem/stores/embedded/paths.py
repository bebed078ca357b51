"""The embedded store's graph expansion for search: relations one hop from the seed entities and,
with ``hops=2``, two hops (the time filter on every relation of the path), scores decayed per hop.
Mirrors search_graph.cypher."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from graphmem.stores.embedded.graph import Attrs, MemoryGraph
from graphmem.types import Relation

SIGNALS = ("fulltext", "seed")  # per seed; the fact cosine ("vector") is the relation's own, set by the store


@dataclass
class _Found:
    edge: Attrs
    hops: int
    path: list[Attrs]
    scores: dict[str, float] = field(default_factory=lambda: dict.fromkeys(SIGNALS, 0.0))


def expand(
    g: MemoryGraph, seeds: dict[str, dict[str, float]], hops: int, decay: float, visible: Callable[[Attrs], bool]
) -> list[Relation]:
    """Relations around ``seeds`` (entity id -> its seed scores), best seed scores per relation."""
    found: dict[str, _Found] = {}
    for seed, scores in seeds.items():
        for d in g.edges_touching([seed]):
            if not visible(d):
                continue
            _keep(found, d, 1, [d], scores, 1.0)
            if hops < 2:
                continue
            mid = d["destination_id"] if d["source_id"] == seed else d["source_id"]
            for d2 in g.edges_touching([mid]):
                far = d2["destination_id"] if d2["source_id"] == mid else d2["source_id"]
                if d2["id"] != d["id"] and far != seed and visible(d2):
                    _keep(found, d2, 2, [d, d2], scores, decay)
    out = []
    for f in sorted(found.values(), key=lambda f: (f.edge["created_at"], f.edge["_seq"])):  # oldest first
        rel = g.relation(f.edge, f.scores)
        if f.hops > 1:
            rel.hops, rel.path = f.hops, [_step(g, e) for e in f.path]
        out.append(rel)
    return out


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
