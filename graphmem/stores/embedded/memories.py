"""The embedded store's memory facts: rows by id, per-scope order, and a search index per scope.

A row holds what the Neo4j store keeps on a (:Memory) node: id, text, hash, embedding (L2-normalised,
as a numpy array), metadata (a JSON object), role, scope key and parts, created_at, updated_at,
deleted_at, and ``mentions``: the ids of the entities the memory MENTIONS (same scope only).
Rows change only through the operations MemoryGraph.apply dispatches here.

The search index of a scope (memory_index.MemoryIndex: unit embeddings for cosine, postings for a
BM25 fulltext score) is appended to when the scope gains its newest memory and rebuilt lazily after
any other change; liveness, time and metadata filters are applied per query as a mask
(``eligible``), whose filter part is kept per filter for live reads.
"""

from __future__ import annotations

from collections.abc import Iterable
from copy import deepcopy
from datetime import datetime
from typing import Any

import numpy as np

from graphmem.schema import filters
from graphmem.schema.filters import Filter
from graphmem.stores.embedded.journal import as_vector
from graphmem.stores.embedded.memory_index import MemoryIndex
from graphmem.stores.lifecycle import is_expired
from graphmem.types import MemoryItem, TimeSpan, utcnow

Attrs = dict[str, Any]


def unit(values: Iterable[float] | np.ndarray | dict[str, str]) -> np.ndarray:
    """The vector (a list, an array or a packed one, see journal.as_vector) scaled to length 1; a
    zero vector stays zero (similar to nothing)."""
    vec = as_vector(values if isinstance(values, (list, np.ndarray, dict)) else list(values))
    norm = float(np.linalg.norm(vec))
    return vec / norm if norm > 0 else vec


class MemoryFacts:
    """The memory facts of every scope."""

    def __init__(self, embedding_dims: int) -> None:
        self.embedding_dims = embedding_dims
        #: index a new scope from its first memory on; off while a store loads its files (opening a
        #: store indexes nothing: a scope's index is built at its first search)
        self.eager = False
        self.clear()

    def clear(self) -> None:
        self.rows: dict[str, Attrs] = {}
        self.by_scope: dict[str, dict[str, None]] = {}  # scope key -> ordered set of memory ids
        self._indexes: dict[str, MemoryIndex] = {}
        self._turns: dict[str, list[Attrs]] = {}  # scope key -> its message memories in turn order

    # --- changes (attrs arrive decoded: datetimes parsed, _seq set) ------------------------------

    def create(self, attrs: Attrs) -> None:
        attrs["embedding"] = unit(attrs["embedding"])
        attrs["mentions"] = list(attrs.get("mentions", []))
        for key, default in (("said_at", None), ("turn", None), ("times", [])):
            attrs.setdefault(key, default)  # rows written before messages had a turn
        self.rows[attrs["id"]] = attrs
        turns = self._turns.get(attrs["scope"])
        if attrs["turn"] is not None and turns is not None:
            if turns and turns[-1]["turn"] > attrs["turn"]:
                self._turns.pop(attrs["scope"])  # said before the newest: rebuilt in order when read
            else:
                turns.append(attrs)
        scope = self.by_scope.setdefault(attrs["scope"], {})
        if not scope and self.eager:  # a new scope: indexed as it is written (its first search builds nothing)
            self._indexes[attrs["scope"]] = MemoryIndex(self.embedding_dims)
        scope[attrs["id"]] = None
        index = self._indexes.get(attrs["scope"])
        if index is not None and (not index.rows or _order(index.rows[-1]) <= _order(attrs)):
            index.append(attrs)  # the usual case: the newest memory of the scope
        else:
            self._indexes.pop(attrs["scope"], None)

    def update(self, memory_id: str, changes: Attrs) -> None:
        row = self.rows[memory_id]
        row.update(text=changes["text"], hash=changes["hash"], updated_at=changes["updated_at"])
        if changes.get("valid_at") is not None:
            row["valid_at"] = changes["valid_at"]
        row["embedding"] = unit(changes["embedding"])
        if changes.get("metadata") is not None:
            row["metadata"] = changes["metadata"]
        row["mentions"] += [e for e in changes.get("mentions", []) if e not in row["mentions"]]
        if changes.get("times") is not None:
            row["times"] = changes["times"]
        self._indexes.pop(row["scope"], None)

    def soft_delete(self, memory_id: str, at: datetime | None, invalid_at: datetime | None = None) -> None:
        row = self.rows[memory_id]
        row["deleted_at"] = at
        row["invalid_at"] = invalid_at or at
        index = self._indexes.get(row["scope"])
        if index is not None:
            index.changed(memory_id)

    def remove(self, memory_id: str) -> None:
        row = self.rows.pop(memory_id)
        self.by_scope.get(row["scope"], {}).pop(memory_id, None)
        self._indexes.pop(row["scope"], None)
        self._turns.pop(row["scope"], None)

    def drop_scope(self, key: str) -> None:
        for memory_id in self.by_scope.pop(key, {}):
            del self.rows[memory_id]
        self._indexes.pop(key, None)
        self._turns.pop(key, None)

    # --- reads -------------------------------------------------------------------------------

    def scope_rows(self, key: str) -> list[Attrs]:
        return oldest_first(self.rows[i] for i in self.by_scope.get(key, {}))

    def index(self, key: str) -> MemoryIndex:
        index = self._indexes.get(key)
        if index is None:
            index = self._indexes[key] = MemoryIndex(self.embedding_dims)
            for row in self.scope_rows(key):
                index.append(row)
        return index

    def turns(self, key: str) -> list[Attrs]:
        """The scope's memories stored from messages, in turn order (when said, then when stored)."""
        turns = self._turns.get(key)
        if turns is None:
            rows = (self.rows[i] for i in self.by_scope.get(key, {}))
            turns = self._turns[key] = sorted((r for r in rows if r["turn"] is not None), key=lambda r: r["turn"])
        return turns


def _order(row: Attrs) -> tuple[datetime, int]:
    return row["created_at"], row["_seq"]


def oldest_first(rows: Iterable[Attrs]) -> list[Attrs]:
    return sorted(rows, key=_order)


def visible(row: Attrs, as_of: datetime | None, known_at: datetime | None = None) -> bool:
    """Live memories when both are None. ``as_of`` (event time): the memories true then, valid_at <=
    as_of < invalid_at (valid_at defaults to created_at; a retired memory without invalid_at ends at
    deleted_at). ``known_at`` (transaction time): the memories graphmem held then, created_at <=
    known_at < deleted_at. Never expired ones (retention). Mirrored by cypher/search_memories.cypher."""
    if is_expired(row.get("expires_at")):
        return False
    if as_of is None and known_at is None:
        return row["deleted_at"] is None
    if known_at is not None:
        if row["created_at"] > known_at or (row["deleted_at"] is not None and row["deleted_at"] <= known_at):
            return False
    if as_of is None:
        return True
    start = row.get("valid_at") or row["created_at"]
    end = row.get("invalid_at") or row["deleted_at"]
    if known_at is not None and row["deleted_at"] is not None and row["deleted_at"] > known_at:
        end = None  # retired later than known_at: not known then
    return start <= as_of and (end is None or as_of < end)


def eligible(index: MemoryIndex, as_of: datetime | None, known_at: datetime | None, flt: Filter | None) -> np.ndarray:
    """visible(row, as_of, known_at) and matches(row, flt) for every row of ``index``, as one mask.
    A live read (no as_of, no known_at) reuses the filter's mask of earlier reads, extended to rows
    appended since, and checks only the rows that can expire against the clock."""
    rows = index.rows
    if as_of is not None or known_at is not None:
        return np.array([visible(r, as_of, known_at) and matches(r, flt) for r in rows], dtype=bool)
    key = repr(flt)  # not the filter itself: 1, 1.0 and True are equal keys, yet match different values
    mask = index.masks.get(key)
    if mask is None and len(index.masks) >= 32:  # many different filters: keep the newest few only
        index.masks.clear()
    if mask is None or len(mask) < len(rows):
        done = 0 if mask is None else len(mask)
        more = np.array([matches(r, flt) for r in rows[done:]], dtype=bool)
        mask = index.masks[key] = more if mask is None else np.concatenate([mask, more])
    live: np.ndarray = mask & ~index.deleted
    now = utcnow()
    for i in index.expiring:
        if live[i] and is_expired(rows[i]["expires_at"], now):
            live[i] = False
    return live


def matches(row: Attrs, flt: Filter | None) -> bool:
    """The memory filter (graphmem.schema.filters) on a row: its built-in fields and its metadata."""
    if flt is None:
        return True
    record = {
        "user_id": row["user_id"], "agent_id": row["agent_id"], "run_id": row["run_id"],
        "created_at": row["created_at"], "updated_at": row["updated_at"],
        "valid_at": row.get("valid_at") or row["created_at"], "invalid_at": row.get("invalid_at"),
        "memory": row["text"], "role": row["role"],
    }  # fmt: skip
    return filters.matches(flt, "memory", record, row["metadata"])


def memory_item(row: Attrs, score: float | None = None, scores: dict[str, float] | None = None) -> MemoryItem:
    """A row as the contract returns it: a private copy of the metadata, no embedding."""
    return MemoryItem(
        id=row["id"], text=row["text"], hash=row["hash"], user_id=row["user_id"], agent_id=row["agent_id"],
        run_id=row["run_id"], metadata=_copied(row["metadata"]), role=row["role"], created_at=row["created_at"],
        updated_at=row["updated_at"], deleted_at=row["deleted_at"], score=score, scores=dict(scores or {}),
        expires_at=row.get("expires_at"),
        said_at=row["said_at"], turn=row["turn"], times=[TimeSpan.from_dict(t) for t in row["times"]],
        valid_at=row.get("valid_at") or row["created_at"], invalid_at=row.get("invalid_at"),
        mentions=list(row.get("mentions", [])),
    )  # fmt: skip


def _copied(metadata: dict[str, Any]) -> dict[str, Any]:
    """A private copy of a memory's metadata: a flat copy when every value is a scalar (the usual
    case, and many times cheaper than deepcopy), else a deep one."""
    if isinstance(metadata, dict) and all(v is None or isinstance(v, (str, int, float, bool)) for v in metadata.values()):
        return dict(metadata)
    return deepcopy(metadata)
