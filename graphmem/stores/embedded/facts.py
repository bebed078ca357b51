"""The embedded store's index of relation facts: per scope, every relation version of the scope
(current or retired) as arrays: the unit fact embeddings (a zero row without a fact), the times the
time filter reads, the fact texts, and each entity's rows. Rebuilt lazily after a relation of the
scope is created, retired, given a fact or removed. Search reads it with one matrix product per
query and numpy masks (the time filter, a seed's relations), so a hub of 1,000 relations costs no
per-relation Python work (pool.Pool). Mirrors the Neo4j store's exact scan of a scope's relation
facts (search_graph.cypher)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from graphmem.stores.embedded.journal import as_vector

Attrs = dict[str, object]
_TIMES = ("valid_at", "invalid_at", "created_at", "expired_at")


@dataclass
class FactIndex:
    ids: list[str]  # relation ids, oldest first
    matrix: np.ndarray  # one unit fact embedding per row (zeros without one)
    rows: dict[str, int]  # relation id -> its row
    facts: list[str | None]  # the fact text of each row
    has_fact: np.ndarray  # bool per row: the relation has a fact embedding
    times: dict[str, np.ndarray]  # valid_at, invalid_at, created_at, expired_at: epoch seconds, NaN for none
    by_entity: dict[str, np.ndarray]  # entity id -> rows of the relations touching it, oldest first
    ends: list[tuple[str, str]]  # (source id, destination id) of each row

    def cosines(self, query: np.ndarray) -> np.ndarray:
        """The cosine of the unit ``query`` and every fact of the scope, by row (0 without a fact)."""
        return self.matrix @ query if self.ids else np.zeros(0)

    def scores(self, query: np.ndarray, moved: np.ndarray | None, shift: float) -> np.ndarray:
        """Each fact's score by row: ``fact . moved + shift`` (GraphQuery.fact_embedding, the
        hubness correction), the cosine with the unit ``query`` without ``moved``; 0 without a fact."""
        if moved is None or not self.ids:
            return self.cosines(query)
        out: np.ndarray = np.where(self.has_fact, self.matrix @ moved + shift, 0.0)
        return out

    def visible(self, as_of: datetime | None, known_at: datetime | None, now: datetime) -> np.ndarray:
        """stores.base.relation_visible of every row, as one mask."""
        t = self.times
        with np.errstate(invalid="ignore"):  # NaN compares False: the open ends below
            ok = np.ones(len(self.ids), dtype=bool)
            invalid = t["invalid_at"]
            if known_at is not None:
                k = known_at.timestamp()
                ok &= ~(t["created_at"] > k) & ~(t["expired_at"] <= k)
                invalid = np.where(np.isnan(t["expired_at"]), invalid, np.nan)
            at = (as_of or known_at or now).timestamp()
            visible: np.ndarray = ok & ~(t["valid_at"] > at) & (np.isnan(invalid) | (at < invalid))
        return visible


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
            index = self._by_scope[key] = self._build(relations())
        return index

    def _build(self, rels: list[Attrs]) -> FactIndex:
        matrix = np.zeros((len(rels), self.embedding_dims), dtype=np.float64)
        has_fact = np.zeros(len(rels), dtype=bool)
        ends: dict[str, list[int]] = {}
        for i, d in enumerate(rels):
            if d.get("fact_embedding") is not None:
                matrix[i], has_fact[i] = as_vector(d["fact_embedding"]), True
            for e in dict.fromkeys((str(d["source_id"]), str(d["destination_id"]))):
                ends.setdefault(e, []).append(i)
        ids = [str(d["id"]) for d in rels]
        times = {name: np.array([_seconds(d.get(name)) for d in rels], dtype=np.float64) for name in _TIMES}
        return FactIndex(ids, matrix, {r: i for i, r in enumerate(ids)}, [f if isinstance(f := d.get("fact"), str) else None for d in rels],
                         has_fact, times, {e: np.array(r, dtype=np.int64) for e, r in ends.items()},
                         [(str(d["source_id"]), str(d["destination_id"])) for d in rels])


def _seconds(value: object) -> float:
    return value.timestamp() if isinstance(value, datetime) else float("nan")


def best_facts(index: FactIndex, sims: np.ndarray, k: int, threshold: float, keep: Callable[[str], bool]) -> dict[str, float]:
    """Relation id -> fact score (``sims``: FactIndex.scores) of the ``k`` best relations with a
    fact and score >= threshold that ``keep`` accepts (visible at the query's time, passing its
    filter), best first."""
    if k <= 0 or not index.ids:
        return {}
    out: dict[str, float] = {}
    for i in np.argsort(-sims, kind="stable"):
        if sims[i] < threshold or len(out) >= k:
            break
        if index.has_fact[i] and keep(index.ids[i]):
            out[index.ids[i]] = float(sims[i])
    return out
