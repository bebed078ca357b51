"""The embedded store: the graph in a networkx MultiDiGraph, made durable by a journal on disk.

Every change is first *planned* against the current graph into a list of small operations
(create entity, touch entity, create relation, mention relation, retire relation, delete scope,
reset), then journaled, then applied. Replaying the journal applies the same operations, so
generated ids and merge decisions are never re-made, and a failed plan or a failed journal write
leaves the graph untouched (``write`` is atomic).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from itertools import chain
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from graphmem.errors import ConfigError, GraphMemError, InvalidInputError, StoreError
from graphmem.stores.base import EntityCandidate, GraphQuery, GraphStore
from graphmem.stores.embedded.journal import Journal
from graphmem.types import Entity, GraphWrite, Relation, Scope, iso, new_id, parse_time

log = logging.getLogger(__name__)

_TIME_FIELDS = frozenset({"created_at", "updated_at", "valid_at", "invalid_at", "expired_at"})
_WORD = re.compile(r"\w+")
Op = list[Any]
Attrs = dict[str, Any]


@dataclass
class _ScopeIndex:
    """Per-scope lookup tables, rebuilt lazily after the scope's entities change."""

    ids: list[str]
    matrix: np.ndarray  # one L2-normalised embedding row per entity
    tokens: list[frozenset[str]]  # word tokens of each canonical name


class EmbeddedStore(GraphStore):
    """A durable in-process graph store in the folder ``path``; one open store per folder."""

    def __init__(self, path: str | Path, embedding_dims: int, *, compact_every: int = 1000) -> None:
        self.path = Path(path).expanduser()
        self.embedding_dims = int(embedding_dims)
        self.compact_every = compact_every
        self.round_trips = 0
        self._lock = threading.RLock()
        self._closed = False
        self._clear()
        self._journal = Journal(self.path)
        try:
            self._load()
        except BaseException:
            self._journal.close()
            raise

    # --- the contract -------------------------------------------------------------------------

    def setup(self) -> None:
        with self._lock:
            self._begin()  # nothing to create: the indexes live in memory

    def match_entities(self, scope: Scope, candidates: list[EntityCandidate], threshold: float) -> list[Entity | None]:
        with self._lock:
            self._begin()
            key = scope.key
            out: list[Entity | None] = [None] * len(candidates)
            pending: list[int] = []
            for i, candidate in enumerate(candidates):
                found = self._by_canonical.get((key, candidate.canonical))
                if found is None:
                    pending.append(i)
                else:
                    out[i] = self._entity(found, score=1.0)
            index = self._scope_index(key)
            if pending and index.ids:
                queries = _normalise(np.array([self._vector(candidates[i].embedding) for i in pending]))
                sims = queries @ index.matrix.T
                for row, i in enumerate(pending):
                    best = int(sims[row].argmax())
                    if sims[row, best] >= threshold:
                        out[i] = self._entity(index.ids[best], score=float(sims[row, best]))
            return out

    def relations_around(self, scope: Scope, entity_ids: list[str]) -> list[Relation]:
        with self._lock:
            self._begin()
            seeds = [i for i in entity_ids if self._in_scope(i, scope.key)]
            return [self._relation(d) for d in self._edges_touching(seeds) if _is_current(d)]

    def write(self, write: GraphWrite) -> None:
        with self._lock:
            self._begin()
            ops = self._plan(write)
            if ops:
                self._commit(ops)

    def search_graph(self, scope: Scope, query: GraphQuery) -> list[Relation]:
        with self._lock:
            self._begin()
            key = scope.key
            index = self._scope_index(key)
            vector = _vector_seeds(index, _normalise(np.array([self._vector(query.embedding)]))[0], query)
            text = _fulltext_seeds(index, query)
            named = {self._by_canonical[(key, c)] for c in query.seed_canonicals if (key, c) in self._by_canonical}
            as_of = parse_time(query.as_of, field_name="as_of")
            out = []
            for d in self._edges_touching(set(vector) | set(text) | named):
                if not _visible(d, as_of, query.include_invalidated):
                    continue
                ends = (d["source_id"], d["destination_id"])
                scores = {
                    "vector": max(vector.get(e, 0.0) for e in ends),
                    "fulltext": max(text.get(e, 0.0) for e in ends),
                    "seed": 1.0 if named.intersection(ends) else 0.0,
                }
                out.append(self._relation(d, scores))
            out.sort(key=lambda r: -max(r.scores.values()))  # stable: ties stay oldest first
            return out

    def get_all(self, scope: Scope, include_invalidated: bool = False, limit: int | None = None) -> list[Relation]:
        with self._lock:
            self._begin()
            nodes = self._by_scope.get(scope.key, {})
            edges = (d for _, _, d in self._graph.out_edges(nodes, data=True))
            found = _oldest_first(d for d in edges if include_invalidated or _is_current(d))
            return [self._relation(d) for d in found[:limit]]

    def entities(self, scope: Scope) -> list[Entity]:
        with self._lock:
            self._begin()
            nodes = (self._graph.nodes[i] for i in self._by_scope.get(scope.key, {}))
            return [self._entity(n["id"]) for n in _oldest_first(nodes)]

    def delete_all(self, scope: Scope) -> int:
        with self._lock:
            self._begin()
            count = len(self._by_scope.get(scope.key, {}))
            if count:
                self._commit([["delete_scope", scope.key]])
            return count

    def reset(self) -> None:
        with self._lock:
            self._begin()
            self._commit([["reset"]])
            self._compact()

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                if self._journal.lines:
                    self._compact()
            finally:
                self._journal.close()

    # --- planning a write (no change to the graph) -----------------------------------------------

    def _plan(self, w: GraphWrite) -> list[Op]:
        key, at = w.scope.key, _iso(w.at)
        ops: list[Op] = []
        retired: set[str] = set()
        for inv in w.invalidations:
            d = self._edge(inv.relation_id)
            if d is None or d["scope"] != key or not _is_current(d) or inv.relation_id in retired:
                continue  # another scope's, unknown or already retired: ignored by contract
            retired.add(inv.relation_id)
            ops.append(["retire", inv.relation_id, _iso(inv.invalid_at), at])
        ids = self._plan_entities(w, at, ops)
        self._plan_relations(w, at, ids, retired, ops)
        return ops

    def _plan_entities(self, w: GraphWrite, at: str | None, ops: list[Op]) -> dict[str, str]:
        """Plan creates and touches; returns write id -> stored id.

        A touch names an entity of the scope by id (a cosine match may carry another canonical);
        a "new" entity whose canonical already exists (a concurrent add made it) becomes a touch.
        """
        key, ids, planned, touched = w.scope.key, {}, {}, set()  # planned: canonical -> stored id
        for e in w.entities:
            if not e.is_new and self._in_scope(e.id, key):
                stored = e.id
            else:
                stored = planned.get(e.canonical) or self._by_canonical.get((key, e.canonical))
            if stored is None:
                stored = new_id() if e.id in self._graph or e.id in touched else e.id
                entity = {"id": stored, "name": e.name, "canonical": e.canonical, "entity_type": e.entity_type}
                entity.update(embedding=self._vector(e.embedding), mentions=1, created_at=at, updated_at=at)
                ops.append(["entity", {**entity, "scope": key, **w.scope.properties()}])
            elif stored not in touched:
                ops.append(["touch", stored, at])
            touched.add(stored)
            planned[e.canonical] = ids[e.id] = stored
        return ids

    def _plan_relations(self, w: GraphWrite, at: str | None, ids: dict[str, str], retired: set[str], ops: list[Op]) -> None:
        key, planned, written = w.scope.key, {}, set(ids.values())  # planned: triple -> new current id
        for r in w.relations:
            src, dst = ids.get(r.source_id, r.source_id), ids.get(r.destination_id, r.destination_id)
            for end in (src, dst):
                if end not in written and not self._in_scope(end, key):
                    raise InvalidInputError(f"relation endpoint {end!r} is not an entity of the scope")
            triple = (src, r.relationship, dst)
            found = planned.get(triple) or self._current_instance(triple, retired)
            if found:
                ops.append(["mention", found, w.add_id, at])
                continue
            rid = new_id()
            ops.append(["relation", {
                "id": rid, "source_id": src, "destination_id": dst, "type": r.relationship,
                "valid_at": _iso(r.valid_at), "invalid_at": _iso(r.invalid_at), "created_at": at,
                "updated_at": at, "expired_at": None, "mentions": 1, "provenance": [w.add_id], "scope": key,
            }])  # fmt: skip
            if r.invalid_at is None:
                planned[triple] = rid

    def _current_instance(self, triple: tuple[str, str, str], retired: set[str]) -> str | None:
        src, rel_type, dst = triple
        for rid, d in (self._graph.get_edge_data(src, dst) or {}).items():
            if d["type"] == rel_type and _is_current(d) and rid not in retired:
                return rid
        return None

    # --- applying operations (live and on replay) -------------------------------------------

    def _commit(self, ops: list[Op]) -> None:
        self._journal.append({"ops": ops})  # durable first, then visible
        self._apply(ops)
        if self._journal.lines >= self.compact_every:
            try:
                self._compact()
            except StoreError:  # the write itself is already durable in the journal
                log.warning("compaction of %s failed; will retry", self.path, exc_info=True)

    def _apply(self, ops: Iterable[Op]) -> None:
        for kind, *args in ops:
            getattr(self, f"_op_{kind}")(*args)

    def _op_entity(self, data: Attrs) -> None:
        attrs = _decode(data, self._next_seq())
        self._graph.add_node(attrs["id"], **attrs)
        self._by_canonical[(attrs["scope"], attrs["canonical"])] = attrs["id"]
        self._by_scope.setdefault(attrs["scope"], {})[attrs["id"]] = None
        self._index.pop(attrs["scope"], None)

    def _op_touch(self, entity_id: str, at: str) -> None:
        node = self._graph.nodes[entity_id]
        node["mentions"] += 1
        node["updated_at"] = parse_time(at)

    def _op_relation(self, data: Attrs) -> None:
        attrs = _decode(data, self._next_seq())
        attrs["provenance"] = list(attrs["provenance"])
        self._graph.add_edge(attrs["source_id"], attrs["destination_id"], key=attrs["id"], **attrs)
        self._ends[attrs["id"]] = (attrs["source_id"], attrs["destination_id"])

    def _op_mention(self, relation_id: str, add_id: str, at: str) -> None:
        d = self._edge(relation_id)
        d["mentions"] += 1
        d["updated_at"] = parse_time(at)
        if add_id not in d["provenance"]:
            d["provenance"].append(add_id)

    def _op_retire(self, relation_id: str, invalid_at: str, expired_at: str) -> None:
        d = self._edge(relation_id)
        d["invalid_at"], d["expired_at"] = parse_time(invalid_at), parse_time(expired_at)

    def _op_delete_scope(self, key: str) -> None:
        nodes = self._by_scope.pop(key, {})
        for _, _, rid in list(self._graph.edges(nodes, keys=True)) + list(self._graph.in_edges(nodes, keys=True)):
            self._ends.pop(rid, None)
        for node in nodes:
            self._by_canonical.pop((key, self._graph.nodes[node]["canonical"]), None)
        self._graph.remove_nodes_from(nodes)
        self._index.pop(key, None)

    def _op_reset(self) -> None:
        self._clear()

    # --- state, loading and compaction ------------------------------------------------------

    def _clear(self) -> None:
        self._graph = nx.MultiDiGraph()
        self._by_canonical: dict[tuple[str, str], str] = {}
        self._by_scope: dict[str, dict[str, None]] = {}  # an ordered set of entity ids per scope
        self._ends: dict[str, tuple[str, str]] = {}  # relation id -> (source id, destination id)
        self._index: dict[str, _ScopeIndex] = {}
        self._seq = 0

    def _load(self) -> None:
        snapshot, records = self._journal.load()
        try:
            if snapshot:
                self._apply([["entity", e] for e in snapshot["entities"]])
                self._apply([["relation", r] for r in snapshot["relations"]])
            for record in records:
                self._apply(record["ops"])
        except (KeyError, TypeError, ValueError, GraphMemError) as exc:
            raise StoreError(f"cannot load graph store {self.path}: {exc!r}") from exc
        for _, node in self._graph.nodes(data=True):
            if len(node["embedding"]) != self.embedding_dims:
                raise ConfigError(
                    f"graph store {self.path} holds {len(node['embedding'])}-dimensional embeddings, "
                    f"not {self.embedding_dims}: use the embedder it was built with, or a new folder"
                )

    def _compact(self) -> None:
        nodes = _oldest_first(n for _, n in self._graph.nodes(data=True))
        edges = _oldest_first(d for _, _, d in self._graph.edges(data=True))
        self._journal.write_snapshot({"entities": [_encode(n) for n in nodes], "relations": [_encode(d) for d in edges]})

    def _next_seq(self) -> int:
        self._seq += 1
        return self._seq

    # --- reading helpers ----------------------------------------------------------------------

    def _begin(self) -> None:
        if self._closed:
            raise StoreError(f"graph store {self.path} is closed")
        self.round_trips += 1

    def _vector(self, values: list[float]) -> list[float]:
        if len(values) != self.embedding_dims:
            raise InvalidInputError(f"embedding has {len(values)} dimensions, the store expects {self.embedding_dims}")
        return [float(v) for v in values]

    def _in_scope(self, entity_id: str, key: str) -> bool:
        return entity_id in self._by_scope.get(key, {})

    def _edge(self, relation_id: str) -> Attrs | None:
        ends = self._ends.get(relation_id)
        return None if ends is None else self._graph.edges[ends[0], ends[1], relation_id]

    def _edges_touching(self, entity_ids: Iterable[str]) -> list[Attrs]:
        ids = list(entity_ids)
        edges = chain(self._graph.out_edges(ids, keys=True, data=True), self._graph.in_edges(ids, keys=True, data=True))
        unique = {rid: d for _, _, rid, d in edges}
        return _oldest_first(unique.values())

    def _scope_index(self, key: str) -> _ScopeIndex:
        index = self._index.get(key)
        if index is None:
            nodes = [self._graph.nodes[i] for i in self._by_scope.get(key, {})]
            rows = np.array([n["embedding"] for n in nodes], dtype=np.float64).reshape(len(nodes), self.embedding_dims)
            tokens = [frozenset(_WORD.findall(n["canonical"].casefold())) for n in nodes]
            index = self._index[key] = _ScopeIndex([n["id"] for n in nodes], _normalise(rows), tokens)
        return index

    def _entity(self, entity_id: str, score: float | None = None) -> Entity:
        n = self._graph.nodes[entity_id]
        return Entity(
            id=n["id"], name=n["name"], canonical=n["canonical"], entity_type=n["entity_type"],
            mentions=n["mentions"], created_at=n["created_at"], updated_at=n["updated_at"], score=score,
        )  # fmt: skip

    def _relation(self, d: Attrs, scores: dict[str, float] | None = None) -> Relation:
        nodes = self._graph.nodes
        return Relation(
            id=d["id"], source_id=d["source_id"], source=nodes[d["source_id"]]["name"], relationship=d["type"],
            destination_id=d["destination_id"], destination=nodes[d["destination_id"]]["name"],
            valid_at=d["valid_at"], invalid_at=d["invalid_at"], created_at=d["created_at"],
            expired_at=d["expired_at"], mentions=d["mentions"], provenance=list(d["provenance"]),
            scores=dict(scores or {}),
        )  # fmt: skip


# --- pure helpers ---------------------------------------------------------------------------


def _iso(value: datetime | None) -> str | None:
    return iso(parse_time(value))  # naive datetimes are UTC, never local time


def _encode(attrs: Attrs) -> Attrs:
    """JSON-ready attributes: datetimes as ISO strings, internal keys dropped."""
    return {k: (iso(v) if k in _TIME_FIELDS else v) for k, v in attrs.items() if not k.startswith("_")}


def _decode(data: Attrs, seq: int) -> Attrs:
    return {**{k: (parse_time(v) if k in _TIME_FIELDS else v) for k, v in data.items()}, "_seq": seq}


def _oldest_first(items: Iterable[Attrs]) -> list[Attrs]:
    return sorted(items, key=lambda a: (a["created_at"], a["_seq"]))


def _is_current(d: Attrs) -> bool:
    return d["invalid_at"] is None and d["expired_at"] is None


def _visible(d: Attrs, as_of: datetime | None, include_invalidated: bool) -> bool:
    """The contract's filter: current only; or valid at ``as_of`` and not yet expired at it."""
    if include_invalidated:
        return True
    if as_of is None:
        return _is_current(d)
    started = d["valid_at"] is None or d["valid_at"] <= as_of
    ongoing = d["invalid_at"] is None or as_of < d["invalid_at"]
    return started and ongoing and (d["expired_at"] is None or as_of < d["expired_at"])


def _normalise(rows: np.ndarray) -> np.ndarray:
    """L2-normalise rows defensively; a zero row stays zero (similar to nothing)."""
    rows = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    return np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)


def _vector_seeds(index: _ScopeIndex, query: np.ndarray, q: GraphQuery) -> dict[str, float]:
    """Entity id -> cosine for the top_k entities with cosine >= threshold."""
    if not index.ids or q.top_k <= 0:
        return {}
    sims = index.matrix @ query
    best = [int(i) for i in np.argsort(-sims, kind="stable")[: q.top_k] if sims[i] >= q.threshold]
    return {index.ids[i]: float(sims[i]) for i in best}


def _fulltext_seeds(index: _ScopeIndex, q: GraphQuery) -> dict[str, float]:
    """Entity id -> share of the name's word tokens found in the query text, top_k, > 0 only."""
    words = set(_WORD.findall(q.text.casefold()))
    if not words or q.top_k <= 0:
        return {}
    scored = [(len(t & words) / len(t), i) for i, t in enumerate(index.tokens) if t and t & words]
    scored.sort(key=lambda s: -s[0])
    return {index.ids[i]: score for score, i in scored[: q.top_k]}
