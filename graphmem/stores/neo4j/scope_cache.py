"""A process's cache of scopes' entity-name and relation-fact vectors, for the relation half of
search (cached_search.py): the exact cosines search_graph.cypher computes by scanning ~1,000
vectors in Cypher (tens of milliseconds each scan), done in numpy in the client.

A scope's entry is valid for one version of the scope (its (:ScopeVersion) node: every statement
that writes its entities or relations sets a new random version first, in the same transaction);
each search reads the version and loads the scope again when it moved, so a write of another
process is seen by the next search.
The key is the whole scope key (a security boundary: nothing is shared between scopes). Least
recently used scopes are evicted past ``max_bytes``.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from graphmem.types import Relation

#: scopes whose last met version the cache remembers (a key and a version each: a few MiB at most)
SEEN = 10_000
#: a missing time or sequence number sorts last (Cypher orders nulls last in ascending order)
LAST = np.iinfo(np.int64).max
FIRST = np.iinfo(np.int64).min  # a missing valid_at: no lower bound
FloatArray = npt.NDArray[np.float32]
IntArray = npt.NDArray[np.int64]


def _unit(rows: Sequence[Sequence[float] | None], dims: int) -> tuple[FloatArray, npt.NDArray[np.bool_]]:
    """Unit vectors of the rows of ``dims`` numbers (zeros elsewhere) and which rows have them."""
    has = np.array([v is not None and len(v) == dims for v in rows], dtype=bool)
    out = np.zeros((len(rows), dims), dtype=np.float32)  # as Neo4j stores them
    if has.any():
        out[has] = np.array([v for v, ok in zip(rows, has, strict=True) if ok], dtype=np.float32)
        norms = np.linalg.norm(out[has], axis=1, keepdims=True)
        out[has] = out[has] / np.where(norms > 0, norms, 1.0)
    return out, has


def _micros(pair: Sequence[int | None] | None, missing: int) -> int:
    """A time read as [epoch seconds, nanosecond] in microseconds since the epoch (graphmem writes
    times from Python datetimes, to the microsecond; nanoseconds of years 1-9999 overflow int64)."""
    if pair is None or pair[0] is None:
        return missing
    return int(pair[0]) * 1_000_000 + int(pair[1] or 0) // 1000


def _rank(values: Sequence[str]) -> IntArray:
    """Each value's position in sorted order (ties: equal ranks do not occur for unique ids)."""
    order = np.argsort(np.array(values, dtype=object), kind="stable")
    rank = np.empty(len(values), dtype=np.int64)
    rank[order] = np.arange(len(values))
    return rank


@dataclass
class ScopeVectors:
    """One scope at one version: entities and relations as arrays, in load order."""

    version: str | None
    entity_ids: list[str]
    entity_vectors: FloatArray
    entity_has: npt.NDArray[np.bool_]  # an embedding of the store's dimension
    entity_rank: IntArray  # position by id (the seeds' tie-break)
    eids: list[str]  # relations' element ids (search_graph_rows.cypher)
    rel_ids: list[str]
    fact_vectors: FloatArray
    fact_has: npt.NDArray[np.bool_]
    fact_text: npt.NDArray[np.str_]  # lower-case fact text, "" for none (np.char.find: the query terms they hold)
    fact_known: npt.NDArray[np.bool_]  # a fact text is stored
    created: IntArray
    expired: IntArray  # missing: LAST
    valid: IntArray  # missing: FIRST (no lower bound)
    invalid: IntArray  # missing: LAST
    has_expired: npt.NDArray[np.bool_]
    tie_rank: IntArray  # position by (created_at, seq, id), nulls last: every ORDER BY's tie-break
    incident: list[IntArray] = field(default_factory=list)  # per entity: its relations (either end)
    entity_index: dict[str, int] = field(default_factory=dict)
    canonical: dict[str, list[int]] = field(default_factory=dict)  # canonical name -> entities
    #: relations read so far (cached_search._fetch), by index, without scores: valid for this version
    rows: dict[int, Relation] = field(default_factory=dict)

    @property
    def nbytes(self) -> int:
        arrays = (self.entity_vectors, self.fact_vectors, self.fact_text, self.created, self.expired, self.valid, self.invalid, self.tie_rank)
        # ids and element ids as Python strings (~100 bytes each with their headers), and a
        # relation read by a search as an object with its dicts and strings (~1.5 KB)
        text = 100 * (2 * len(self.rel_ids) + len(self.entity_ids))
        return int(sum(a.nbytes for a in arrays)) + sum(a.nbytes for a in self.incident) + text + 1500 * len(self.rows)


def load(row: Mapping[str, Any], dims: int) -> ScopeVectors:
    """A ScopeVectors from search_graph_seeds.cypher's row (one that carries the vectors)."""
    entities, relations = row["entities"], row["relations"]
    entity_ids = [str(e[0]) for e in entities]
    entity_vectors, entity_has = _unit([e[1] for e in entities], dims)
    fact_vectors, fact_has = _unit([r[4] for r in relations], dims)
    created = np.array([_micros(r[7], LAST) for r in relations], dtype=np.int64)
    seq = np.array([LAST if r[6] is None else int(r[6]) for r in relations], dtype=np.int64)
    rel_ids = [str(r[1]) for r in relations]
    tie = np.lexsort((_rank(rel_ids), seq, created)) if relations else np.zeros(0, dtype=np.int64)
    tie_rank = np.empty(len(relations), dtype=np.int64)
    tie_rank[tie] = np.arange(len(relations))
    index = {e: i for i, e in enumerate(entity_ids)}
    ends: list[list[int]] = [[] for _ in entity_ids]
    for k, r in enumerate(relations):
        s, d = index.get(str(r[2])), index.get(str(r[3]))
        for end in {s, d} - {None}:
            ends[end].append(k)  # type: ignore[index]  # None removed above
    return ScopeVectors(
        version=row["version"], entity_ids=entity_ids, entity_vectors=entity_vectors, entity_has=entity_has,
        entity_rank=_rank(entity_ids), eids=[str(r[0]) for r in relations], rel_ids=rel_ids,
        fact_vectors=fact_vectors, fact_has=fact_has,
        fact_text=np.array([r[5] or "" for r in relations], dtype=np.str_),
        fact_known=np.array([r[5] is not None for r in relations], dtype=bool), created=created,
        expired=np.array([_micros(r[8], LAST) for r in relations], dtype=np.int64),
        valid=np.array([_micros(r[9], FIRST) for r in relations], dtype=np.int64),
        invalid=np.array([_micros(r[10], LAST) for r in relations], dtype=np.int64),
        has_expired=np.array([r[8] is not None and r[8][0] is not None for r in relations], dtype=bool),
        tie_rank=tie_rank, incident=[np.array(e, dtype=np.int64) for e in ends], entity_index=index,
        canonical=_by_canonical(entities),
    )


def _by_canonical(entities: Sequence[Sequence[Any]]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for i, e in enumerate(entities):
        out.setdefault(str(e[2]), []).append(i)
    return out


class ScopeCache:
    """Scopes' vectors by scope key, least recently used evicted past ``max_bytes``; thread-safe."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[str, ScopeVectors] = OrderedDict()
        self._seen: OrderedDict[str, str] = OrderedDict()  # scope key -> a version met once, not loaded
        self._lock = threading.Lock()
        self.loads = 0  # scopes loaded (cold or stale): for tests and benchmarks

    def seen(self, key: str) -> str | None:
        """The version an earlier search met without loading it (cached_search.search)."""
        with self._lock:
            return self._seen.get(key)

    def see(self, key: str, version: str) -> None:
        with self._lock:
            self._seen[key] = version
            self._seen.move_to_end(key)
            while len(self._seen) > SEEN:
                self._seen.popitem(last=False)

    def peek(self, key: str) -> ScopeVectors | None:
        """The scope's entry whatever its version (not marked as used)."""
        with self._lock:
            return self._entries.get(key)

    def get(self, key: str, version: str | None) -> ScopeVectors | None:
        """The scope's entry if it holds ``version``, else None (a stale entry is dropped)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if entry.version != version:
                del self._entries[key]
                return None
            self._entries.move_to_end(key)
            return entry

    def put(self, key: str, entry: ScopeVectors) -> None:
        with self._lock:
            self.loads += 1
            self._entries[key] = entry
            self._entries.move_to_end(key)
            total = sum(e.nbytes for e in self._entries.values())
            while total > self.max_bytes and len(self._entries) > 1:
                _, gone = self._entries.popitem(last=False)
                total -= gone.nbytes
            if total > self.max_bytes:  # one scope larger than the whole cache: not kept
                self._entries.pop(key, None)

    def keys(self) -> list[str]:
        with self._lock:
            return list(self._entries)

    @property
    def nbytes(self) -> int:
        with self._lock:
            return sum(e.nbytes for e in self._entries.values())
