"""The embedded store: the zero-setup default, in-process on networkx, durable in a folder.

Every change is first *planned* against the current graph into a list of operations (see
graph.py), then journaled and fsync'ed, then applied. Replaying the journal applies the same
operations, so generated ids and merge decisions are never re-made; a failed plan or a failed
journal write leaves the graph untouched, which makes ``write`` atomic.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime
from pathlib import Path

import numpy as np

from graphmem.errors import ConfigError, GraphMemError, InvalidInputError, StoreError
from graphmem.stores.base import EntityCandidate, GraphQuery, GraphStore
from graphmem.stores.embedded.graph import WORD, Attrs, MemoryGraph, Op, ScopeIndex, is_current, normalise
from graphmem.stores.embedded.journal import Journal
from graphmem.types import Entity, GraphWrite, Relation, Scope, iso, new_id, parse_time

log = logging.getLogger(__name__)


class EmbeddedStore(GraphStore):
    """A durable in-process graph store in the folder ``path``; one open store per folder.

    ``round_trips`` counts one per public method call, so benchmarks compare it with Neo4j's.
    The journal is compacted into a snapshot every ``compact_every`` changes and on close.
    """

    def __init__(self, path: str | Path, embedding_dims: int, *, compact_every: int = 1000) -> None:
        self.path = Path(path).expanduser()
        self.embedding_dims = int(embedding_dims)
        self.compact_every = compact_every
        self.round_trips = 0
        self._lock = threading.RLock()
        self._closed = False
        self._graph = MemoryGraph(self.embedding_dims)
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
            key, g = scope.key, self._graph
            out: list[Entity | None] = [None] * len(candidates)
            pending: list[int] = []
            for i, candidate in enumerate(candidates):
                found = g.by_canonical.get((key, candidate.canonical))
                if found is None:
                    pending.append(i)
                else:
                    out[i] = g.entity(found, score=1.0)
            index = g.scope_index(key)
            if pending and index.ids:
                sims = normalise(np.array([self._vector(candidates[i].embedding) for i in pending])) @ index.matrix.T
                for row, i in enumerate(pending):
                    best = int(sims[row].argmax())
                    if sims[row, best] >= threshold:
                        out[i] = g.entity(index.ids[best], score=float(sims[row, best]))
            return out

    def relations_around(self, scope: Scope, entity_ids: list[str]) -> list[Relation]:
        with self._lock:
            self._begin()
            seeds = [i for i in entity_ids if self._graph.in_scope(i, scope.key)]
            return [self._graph.relation(d) for d in self._graph.edges_touching(seeds) if is_current(d)]

    def write(self, write: GraphWrite) -> None:
        with self._lock:
            self._begin()
            ops = self._plan(write)
            if ops:
                self._commit(ops)

    def search_graph(self, scope: Scope, query: GraphQuery) -> list[Relation]:
        with self._lock:
            self._begin()
            key, g = scope.key, self._graph
            index = g.scope_index(key)
            vector = _vector_seeds(index, normalise(np.array([self._vector(query.embedding)]))[0], query)
            text = _fulltext_seeds(index, query)
            named = {g.by_canonical[(key, c)] for c in query.seed_canonicals if (key, c) in g.by_canonical}
            as_of = parse_time(query.as_of, field_name="as_of")
            out = []
            for d in g.edges_touching(set(vector) | set(text) | named):
                if not _visible(d, as_of, query.include_invalidated):
                    continue
                ends = (d["source_id"], d["destination_id"])
                scores = {
                    "vector": max(vector.get(e, 0.0) for e in ends),
                    "fulltext": max(text.get(e, 0.0) for e in ends),
                    "seed": 1.0 if named.intersection(ends) else 0.0,
                }
                out.append(g.relation(d, scores))
            out.sort(key=lambda r: -max(r.scores.values()))  # stable: ties stay oldest first
            return out

    def get_all(self, scope: Scope, include_invalidated: bool = False, limit: int | None = None) -> list[Relation]:
        with self._lock:
            self._begin()
            found = [d for d in self._graph.scope_relations(scope.key) if include_invalidated or is_current(d)]
            return [self._graph.relation(d) for d in found[:limit]]

    def entities(self, scope: Scope) -> list[Entity]:
        with self._lock:
            self._begin()
            return [self._graph.entity(n["id"]) for n in self._graph.scope_entities(scope.key)]

    def delete_all(self, scope: Scope) -> int:
        with self._lock:
            self._begin()
            count = len(self._graph.by_scope.get(scope.key, {}))
            if count:
                self._commit([["delete_scope", scope.key]])
            return count

    def reset(self) -> None:
        with self._lock:
            self._begin()
            self._commit([["reset"]])
            self._journal.write_snapshot(self._graph.snapshot())

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                if self._journal.lines:
                    self._journal.write_snapshot(self._graph.snapshot())
            finally:
                self._journal.close()

    # --- planning a write (no change to the graph) -----------------------------------------------

    def _plan(self, w: GraphWrite) -> list[Op]:
        key, at = w.scope.key, _iso(w.at)
        ops: list[Op] = []
        retired: set[str] = set()
        for inv in w.invalidations:
            d = self._graph.edge(inv.relation_id)
            if d is None or d["scope"] != key or not is_current(d) or inv.relation_id in retired:
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
        g, key = self._graph, w.scope.key
        ids: dict[str, str] = {}
        planned: dict[str, str] = {}  # canonical -> stored id, within this write
        touched: set[str] = set()
        for e in w.entities:
            if not e.is_new and g.in_scope(e.id, key):
                stored: str | None = e.id
            else:
                stored = planned.get(e.canonical) or g.by_canonical.get((key, e.canonical))
            if stored is None:
                stored = new_id() if e.id in g.graph or e.id in touched else e.id
                entity = {"id": stored, "name": e.name, "canonical": e.canonical, "entity_type": e.entity_type}
                entity.update(embedding=self._vector(e.embedding), mentions=1, created_at=at, updated_at=at)
                ops.append(["entity", {**entity, "scope": key, **w.scope.properties()}])
            elif stored not in touched:
                ops.append(["touch", stored, at])
            touched.add(stored)
            planned[e.canonical] = ids[e.id] = stored
        return ids

    def _plan_relations(self, w: GraphWrite, at: str | None, ids: dict[str, str], retired: set[str], ops: list[Op]) -> None:
        key, written = w.scope.key, set(ids.values())
        planned: dict[tuple[str, str, str], str] = {}  # triple -> a current instance made by this write
        for r in w.relations:
            src, dst = ids.get(r.source_id, r.source_id), ids.get(r.destination_id, r.destination_id)
            for end in (src, dst):
                if end not in written and not self._graph.in_scope(end, key):
                    raise InvalidInputError(f"relation endpoint {end!r} is not an entity of the scope")
            triple = (src, r.relationship, dst)
            found = planned.get(triple) or self._graph.current_instance(*triple, skip=retired)
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

    # --- durability -----------------------------------------------------------------------------

    def _commit(self, ops: list[Op]) -> None:
        self._journal.append({"ops": ops})  # durable first, then visible
        self._graph.apply(ops)
        if self._journal.lines >= self.compact_every:
            try:
                self._journal.write_snapshot(self._graph.snapshot())
            except StoreError:  # the change itself is already durable in the journal
                log.warning("compaction of %s failed; retrying later", self.path, exc_info=True)

    def _load(self) -> None:
        snapshot, records = self._journal.load()
        try:
            if snapshot:
                self._graph.load_snapshot(snapshot)
            for record in records:
                self._graph.apply(record["ops"])
        except (KeyError, TypeError, ValueError, AttributeError, AssertionError, GraphMemError) as exc:
            raise StoreError(f"cannot load graph store {self.path}: {exc!r}") from exc
        for _, node in self._graph.graph.nodes(data=True):
            if len(node["embedding"]) != self.embedding_dims:
                raise ConfigError(
                    f"graph store {self.path} holds {len(node['embedding'])}-dimensional embeddings, "
                    f"not {self.embedding_dims}: use the embedder it was built with, or another folder"
                )

    def _begin(self) -> None:
        if self._closed:
            raise StoreError(f"graph store {self.path} is closed")
        self.round_trips += 1

    def _vector(self, values: list[float]) -> list[float]:
        if len(values) != self.embedding_dims:
            raise InvalidInputError(f"embedding has {len(values)} dimensions, the store expects {self.embedding_dims}")
        return [float(v) for v in values]


# --- pure helpers ---------------------------------------------------------------------------


def _iso(value: datetime | None) -> str | None:
    return iso(parse_time(value))  # naive datetimes are UTC, never local time


def _visible(d: Attrs, as_of: datetime | None, include_invalidated: bool) -> bool:
    """The contract's filter: current only; or valid at ``as_of`` and not yet expired at it."""
    if include_invalidated:
        return True
    if as_of is None:
        return is_current(d)
    started = d["valid_at"] is None or d["valid_at"] <= as_of
    ongoing = d["invalid_at"] is None or as_of < d["invalid_at"]
    return started and ongoing and (d["expired_at"] is None or as_of < d["expired_at"])


def _vector_seeds(index: ScopeIndex, query: np.ndarray, q: GraphQuery) -> dict[str, float]:
    """Entity id -> cosine for the top_k entities with cosine >= threshold."""
    if not index.ids or q.top_k <= 0:
        return {}
    sims = index.matrix @ query
    best = [int(i) for i in np.argsort(-sims, kind="stable")[: q.top_k] if sims[i] >= q.threshold]
    return {index.ids[i]: float(sims[i]) for i in best}


def _fulltext_seeds(index: ScopeIndex, q: GraphQuery) -> dict[str, float]:
    """Entity id -> share of the name's word tokens found in the query text; top_k, > 0 only."""
    words = set(WORD.findall(q.text.casefold()))
    if not words or q.top_k <= 0:
        return {}
    scored = [(len(t & words) / len(t), i) for i, t in enumerate(index.tokens) if t & words]
    scored.sort(key=lambda s: -s[0])
    return {index.ids[i]: score for score, i in scored[: q.top_k]}
