"""Which of a seed's relations search reads (GraphQuery.relation_pool): the closest to the query by
fact cosine plus those whose fact text holds a query word, so a hub entity (the user's own node with
hundreds of relations) costs a bounded pool instead of every relation. Mirrors the per-seed ORDER BY
... LIMIT of search_graph.cypher: cosine order, ties oldest first; text matches by how many of the
query's terms the fact contains (lowercase substrings), then cosine, then oldest. Everything is read
from the scope's fact index (facts.FactIndex) by row: one matrix product and one time mask per
search, numpy selections per seed; only the pooled relations become Python objects."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from graphmem.stores.embedded.facts import FactIndex

Attrs = dict[str, object]
_NONE = np.zeros(0, dtype=np.int64)


@dataclass
class Pool:
    """One search's view of the scope's relations: ``sims`` (fact score by row: FactIndex.scores),
    ``mask`` (visible at the query's time), ``check`` (the relation filter, None without one),
    ``size`` (None: no cut) and the query's ``terms``."""

    index: FactIndex
    sims: np.ndarray
    mask: np.ndarray
    check: Callable[[str], bool] | None
    size: int | None
    terms: Sequence[str]
    _counts: np.ndarray | None = field(default=None, repr=False)

    def around(self, entity: str) -> np.ndarray:
        """Rows of the relations touching ``entity`` that the query may see, oldest first."""
        rows: np.ndarray = self.index.by_entity.get(entity, _NONE)
        rows = rows[self.mask[rows]]
        if self.check is not None:
            rows = rows[[self.check(self.index.ids[r]) for r in rows]] if len(rows) else rows
        return rows

    def relations(self, rows: np.ndarray) -> np.ndarray:
        """The pooled ones of a seed's ``rows`` (oldest first in and out)."""
        if self.size is None or len(rows) <= self.size:
            return rows
        return np.sort(rows[self._choose(self.sims[rows], self._matches(rows), (rows,))])

    def paths(self, first: np.ndarray, last: np.ndarray) -> np.ndarray:
        """Indices of the pooled two-hop paths (``first[i]``, ``last[i]``): by the better hop's
        cosine, text on the last hop; in path order (oldest first hop, then oldest last hop)."""
        order = np.lexsort((last, first))
        if self.size is None or len(order) <= self.size:
            return order
        chosen = self._choose(np.maximum(self.sims[first], self.sims[last]), self._matches(last), (last, first))
        return order[np.isin(order, chosen)]

    def _choose(self, cosines: np.ndarray, matches: np.ndarray, ages: tuple[np.ndarray, ...]) -> np.ndarray:
        """Item numbers: the ``size`` best by cosine (ties: oldest), and the ``size`` with most term
        matches (then cosine, then oldest). ``ages``: lexsort keys, least significant first."""
        assert self.size is not None
        best = np.lexsort((*ages, -cosines))[: self.size]
        hits = np.flatnonzero(matches)
        if len(hits):
            keys = tuple(a[hits] for a in ages)
            best = np.union1d(best, hits[np.lexsort((*keys, -cosines[hits], -matches[hits]))[: self.size]])
        return best

    def _matches(self, rows: np.ndarray) -> np.ndarray:
        if not self.terms:
            return np.zeros(len(rows), dtype=np.int64)
        if self._counts is None:  # once per search, over the scope's facts
            self._counts = np.array([matched(f, self.terms) for f in self.index.facts], dtype=np.int64)
        counts: np.ndarray = self._counts[rows]
        return counts


def matched(fact: str | None, terms: Sequence[str]) -> int:
    """How many of ``terms`` the fact text contains (0 without a fact)."""
    if not fact:
        return 0
    text = fact.lower()
    return sum(1 for t in terms if t in text)
