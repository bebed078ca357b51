"""The embedded store's index of relation facts: per scope, a matrix of the unit fact embeddings of
every relation version of the scope that has one (current or retired; the time filter is a mask at
query time), rebuilt lazily after a relation of the scope is created, given a fact or removed.
Mirrors the Neo4j store's exact scan of a scope's relation facts (search_graph.cypher)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from graphmem.stores.embedded.journal import as_vector

Attrs = dict[str, object]


@dataclass
class FactIndex:
    ids: list[str]  # relation ids, oldest first
    matrix: np.ndarray  # one unit fact embedding per row
    rows: dict[str, int]  # relation id -> its row

    def cosines(self, query: np.ndarray) -> np.ndarray:
        """The cosine of the unit ``query`` and every fact of the scope, by row."""
        return self.matrix @ query if self.ids else np.zeros(0)


class FactIndexes:
    """One FactIndex per scope key, built on demand from the scope's relations."""

    def __init__(self, embedding_dims: int) -> None:
        self.embedding_dims = embedding_dims
        self._by_scope: dict[str, FactIndex] = {}

    def invalidate(self, key: str | None = None) -> None:
        if key is None:
            self._by_scope.clear()
        else:
            self._by_scope.pop(key, None)

    def get(self, key: str, relations: Callable[[], list[dict[str, object]]]) -> FactIndex:
        index = self._by_scope.get(key)
        if index is None:
            rows = [d for d in relations() if d.get("fact_embedding") is not None]
            matrix = np.array([as_vector(d["fact_embedding"]) for d in rows], dtype=np.float64)
            ids = [str(d["id"]) for d in rows]
            index = self._by_scope[key] = FactIndex(ids, matrix.reshape(len(rows), self.embedding_dims), {r: i for i, r in enumerate(ids)})
        return index


def best_facts(index: FactIndex, sims: np.ndarray, k: int, threshold: float, keep: Callable[[str], bool]) -> dict[str, float]:
    """Relation id -> fact cosine (``sims``: FactIndex.cosines) of the ``k`` best relations with
    cosine >= threshold that ``keep`` accepts (visible at the query's time, passing its filter), best first."""
    if k <= 0 or not index.ids:
        return {}
    out: dict[str, float] = {}
    for i in np.argsort(-sims, kind="stable"):
        if sims[i] < threshold or len(out) >= k:
            break
        if keep(index.ids[i]):
            out[index.ids[i]] = float(sims[i])
    return out
