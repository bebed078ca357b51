"""The embedded store: the zero-setup default, in-process on networkx, durable in a folder.

Every change is first *planned* against the current graph into a list of operations (plan.py,
graph.py), then journaled and fsync'ed, then applied. Replaying the journal applies the same
operations, so generated ids and merge decisions are never re-made; a failed plan or a failed
journal write leaves the graph untouched, which makes ``write`` atomic. Memory facts live beside
the graph (memories.py) and travel in the same operations, so a write's memories are as atomic.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import numpy as np

from graphmem.errors import ConfigError, GraphMemError, InvalidInputError, StorageFullError, StoreError, WriteOutcomeUnknown
from graphmem.observability import span
from graphmem.observability.conventions import EMBEDDED, statement
from graphmem.observability.decorators import traced_operations
from graphmem.schema.filters import Filter, scoped
from graphmem.schema.words import STOPWORDS
from graphmem.stores.base import (
    EntityCandidate,
    GraphQuery,
    GraphStore,
    MemoryQuery,
    RelationFact,
    relation_visible,
    scope_of_key,
)
from graphmem.stores.embedded import identity, lifecycle
from graphmem.stores.embedded.facts import FactIndex, best_facts
from graphmem.stores.embedded.graph import (
    WORD,
    Attrs,
    MemoryGraph,
    Op,
    ScopeIndex,
    is_current,
    normalise,
)
from graphmem.stores.embedded.journal import Journal
from graphmem.stores.embedded.memories import eligible, matches, memory_item, unit, visible
from graphmem.stores.embedded.neighbours import memory_context
from graphmem.stores.embedded.paths import expand
from graphmem.stores.embedded.plan import WritePlanner
from graphmem.stores.embedded.pool import Pool
from graphmem.stores.lifecycle import Erased, is_expired
from graphmem.stores.memory_context import ContextQuery, MemoryContext
from graphmem.types import (
    Conversation,
    Entity,
    GraphWrite,
    MemoryItem,
    Owners,
    Relation,
    Scope,
    iso,
    parse_time,
    utcnow,
)

log = logging.getLogger(__name__)


#: the store contract's data operations: a span each when tracing is on (its statements, in effect)
OPERATIONS = ("match_entities", "relations_around", "resolve", "add_context", "write", "write_many", "search_graph",
              "set_relation_facts", "scopes", "timeline", "similar_memories", "memory_candidates", "search_memories",
              "memory_context", "get_memory", "list_memories", "delete_memory", "imported_keys", "idempotent_outcome",
              "conversation", "set_summary", "get_all", "entities", "delete_all", "reset", "purge_expired", "forget_scope",
              "forget_entity")


@traced_operations(EMBEDDED, OPERATIONS)
class EmbeddedStore(GraphStore):
    """A durable in-process graph store in the folder ``path``; one open store per folder.

    ``round_trips`` counts one per public method call, so benchmarks compare it with Neo4j's.
    The journal is compacted into a snapshot every ``compact_every`` changes and on close.
    """

    def __init__(self, path: str | Path, embedding_dims: int, *, compact_every: int = 1000, read_only: bool = False,
                 embedder_precision: str | None = None) -> None:
        """``embedder_precision``: refuse a store built at another (stores/embedded/identity.py)."""
        self.path = Path(path).expanduser()
        self.embedder_precision = embedder_precision
        self.read_only = read_only
        self.embedding_dims = int(embedding_dims)
        self.compact_every = compact_every
        self.round_trips = 0
        self._lock = threading.RLock()
        self._closed = False
        self._graph = MemoryGraph(self.embedding_dims)
        self._journal = Journal(self.path, read_only=read_only)
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
            narrow = scoped(scope, None, "relation")
            return [
                self._graph.relation(d) for d in self._graph.edges_touching(seeds)
                if is_current(d) and self._graph.relation_matches(d, narrow)
            ]  # fmt: skip

    def write(self, write: GraphWrite) -> None:
        with self._lock:
            self._begin()
            ops = WritePlanner(self._graph, self._vector).plan(write)
            if ops:
                self._commit(ops)

    def write_many(self, writes: list[GraphWrite]) -> None:
        """All or none, in one journal record: each write is planned against the graph as the
        earlier ones left it (applied in memory, unseen by readers: the lock is held), then the
        batch is journaled once. A failure before the journal holds it reloads the graph from disk."""
        with self._lock:
            self._begin()
            ops: list[Op] = []
            try:
                for w in writes:
                    planned = WritePlanner(self._graph, self._vector).plan(w)
                    self._graph.apply(planned)
                    ops += planned
                if ops:
                    self._journal.append({"ops": ops})
            except BaseException:
                if ops:
                    self._reload()
                raise
            self._compact_if_due()

    def imported_keys(self, keys: list[str]) -> set[str]:
        with self._lock:
            self._begin()
            return {k for k in keys if k in self._graph.import_keys}

    def idempotent_outcome(self, key: str) -> str | None:
        with self._lock:
            self._begin()
            return self._graph.key_outcomes.get(key)

    def search_graph(self, scope: Scope, query: GraphQuery) -> list[Relation]:
        with self._lock:
            self._begin()
            key, g = scope.key, self._graph
            index = g.scope_index(key)
            q = normalise(np.array([self._vector(query.embedding)]))[0]
            vector = _vector_seeds(index, q, query)
            text = _fulltext_seeds(index, query)
            named = {g.by_canonical[(key, c)] for c in query.seed_canonicals if (key, c) in g.by_canonical}
            as_of = parse_time(query.as_of, field_name="as_of")
            known_at = parse_time(query.known_at, field_name="known_at")
            now = utcnow()
            # entity proximity: the best of an endpoint's cosine to the query and its being named exactly
            seeds = {
                e: {"seed": max(vector.get(e, 0.0), 1.0 if e in named else 0.0), "fulltext": text.get(e, 0.0)}
                for e in set(vector) | set(text) | named
            }
            flt = scoped(scope, query.filters, "relation")

            def keep(d: Attrs) -> bool:
                return (query.include_invalidated or _visible(d, as_of, known_at, now)) and g.relation_matches(d, flt)

            facts = g.facts.get(key, lambda: g.scope_relations(key))
            moved = None if query.fact_embedding is None else self._vector(query.fact_embedding)
            sims = facts.scores(q, moved, float(query.fact_shift))
            mask = np.ones(len(facts.ids), dtype=bool) if query.include_invalidated else facts.visible(as_of, known_at, now)
            check = None if flt is None else lambda rid: (d := g.edge(rid)) is not None and g.relation_matches(d, flt)
            out = expand(g, seeds, query.hops, query.hop_decay, Pool(facts, sims, mask, check, query.relation_pool, query.fact_terms))
            return _with_facts(g, out, facts, sims, query, keep)

    def similar_memories(self, scope: Scope, embeddings: list[list[float]], top_k: int = 5) -> list[list[MemoryItem]]:
        return self.memory_candidates(scope, embeddings, top_k, [])[0]

    def memory_candidates(
        self, scope: Scope, embeddings: list[list[float]], top_k: int, entity_ids: list[str], mention_limit: int = 20
    ) -> tuple[list[list[MemoryItem]], list[MemoryItem]]:
        with self._lock:
            self._begin()
            if not embeddings and not entity_ids:
                return [], []
            wanted, narrow = set(entity_ids), scoped(scope, None, "memory")
            rows = self._graph.memories.scope_rows(scope.key)
            mentioning = [
                r for r in reversed(rows)
                if visible(r, None) and wanted.intersection(r["mentions"]) and matches(r, narrow)
            ]  # fmt: skip
            similar = self._similar(scope, embeddings, top_k) if embeddings else []
            return similar, [memory_item(r) for r in mentioning[:mention_limit]]

    def _similar(self, scope: Scope, embeddings: list[list[float]], top_k: int) -> list[list[MemoryItem]]:
        """similar_memories without taking the lock (the caller holds it)."""
        index = self._graph.memories.index(scope.key)
        rows = index.rows
        narrow = scoped(scope, None, "memory")
        live = eligible(index, None, None, narrow)
        sims = index.cosines(np.array([unit(self._vector(e)) for e in embeddings]))
        out = []
        for row_sims in sims:
            best = _top(row_sims, live, top_k)
            out.append([memory_item(rows[i], float(row_sims[i]), {"vector": float(row_sims[i])}) for i in best])
        return out

    def search_memories(self, scope: Scope, query: MemoryQuery) -> list[MemoryItem]:
        with self._lock:
            self._begin()
            index = self._graph.memories.index(scope.key)
            rows = index.rows
            as_of = parse_time(query.as_of, field_name="as_of")
            known_at = parse_time(query.known_at, field_name="known_at")
            flt = scoped(scope, query.filters, "memory")
            mask = eligible(index, as_of, known_at, flt)
            cosines = index.cosines(unit(self._vector(query.embedding))[None, :])[0]
            fulltext = index.bm25(query.text)
            by_text = _top(fulltext, mask & (fulltext > 0), query.top_k)
            best_text = float(fulltext[by_text[0]]) if by_text else 1.0
            text_scores = {i: float(fulltext[i]) / best_text for i in by_text}  # 0..1; 0 outside the top_k
            out = []
            for i in dict.fromkeys(_top(cosines, mask, query.top_k) + by_text):  # merged by id
                scores = {"vector": float(cosines[i]), "fulltext": text_scores.get(i, 0.0)}
                out.append(memory_item(rows[i], scores["vector"], scores))
            out.sort(key=lambda m: -max(m.scores.values()))  # stable: ties stay in candidate order
            return out

    def memory_context(self, scope: Scope, query: ContextQuery) -> MemoryContext:
        with self._lock:
            self._begin()
            return memory_context(self._graph.memories, scope, query, unit(self._vector(query.embedding)))

    def get_memory(self, memory_id: str, owners: Owners | None = None) -> MemoryItem | None:
        with self._lock:
            self._begin()
            row = self._graph.memories.rows.get(memory_id)
            if row is None or (owners is not None and not owners.admits(row)):
                return None
            return None if is_expired(row.get("expires_at")) else memory_item(row)

    def list_memories(
        self, scope: Scope, include_deleted: bool = False, limit: int | None = None, filters: Filter | None = None
    ) -> list[MemoryItem]:
        flt = scoped(scope, filters, "memory")
        with self._lock:
            self._begin()
            rows = [
                r for r in self._graph.memories.scope_rows(scope.key)
                if (include_deleted or r["deleted_at"] is None) and not is_expired(r.get("expires_at")) and matches(r, flt)
            ]  # fmt: skip
            return [memory_item(r) for r in rows[:limit]]

    def delete_memory(self, memory_id: str) -> bool:
        with self._lock:  # the condition and the removal under one lock: one of concurrent deletes wins
            self._begin()
            if memory_id not in self._graph.memories.rows:
                return False
            self._commit([["memory_remove", memory_id]])
            return True

    def get_all(
        self, scope: Scope, include_invalidated: bool = False, limit: int | None = None, filters: Filter | None = None
    ) -> list[Relation]:
        with self._lock:
            self._begin()
            now, flt = utcnow(), scoped(scope, filters, "relation")
            found = [
                d for d in self._graph.scope_relations(scope.key)
                if (include_invalidated or _visible(d, None, None, now)) and self._graph.relation_matches(d, flt)
            ]  # fmt: skip
            return [self._graph.relation(d) for d in found[:limit]]

    def set_relation_facts(self, scope: Scope, facts: list[RelationFact]) -> int:
        with self._lock:
            self._begin()
            ops: list[Op] = []
            for f in facts:
                d = self._graph.edge(f.relation_id)
                if d is not None and d["scope"] == scope.key:
                    ops.append(["relation_fact", f.relation_id, f.fact, unit(self._vector(f.embedding))])
            if ops:
                self._commit(ops)
            return len(ops)

    def scopes(self) -> list[Scope]:
        with self._lock:
            self._begin()
            return [scope_of_key(key) for key, ids in self._graph.by_scope.items() if ids]

    def timeline(self, scope: Scope, canonical: str) -> list[Relation]:
        with self._lock:
            self._begin()
            entity_id = self._graph.by_canonical.get((scope.key, canonical))
            if entity_id is None:
                return []
            narrow = scoped(scope, None, "relation")
            found = [d for d in self._graph.edges_touching([entity_id]) if self._graph.relation_matches(d, narrow)]
            found.sort(key=lambda d: (d["valid_at"] or d["created_at"], d["created_at"]))
            return [self._graph.relation(d) for d in found]

    def entities(self, scope: Scope) -> list[Entity]:
        with self._lock:
            self._begin()
            return [self._graph.entity(n["id"]) for n in self._graph.scope_entities(scope.key)]

    def delete_all(self, scope: Scope) -> int:
        with self._lock:
            self._begin()
            if scope.narrowing:  # a user's run: its memories and relations; entities and the log stay
                memories = [r["id"] for r in self._graph.memories.scope_rows(scope.key) if matches(r, scoped(scope, None, "memory"))]
                relations = [d["id"] for d in self._graph.scope_relations(scope.key) if self._graph.relation_matches(d, scoped(scope, None, "relation"))]
                ops = [["memory_remove", i] for i in memories] + [["relation_remove", i] for i in relations]
                if ops:
                    self._commit(ops)
                return 0
            count = len(self._graph.by_scope.get(scope.key, {}))
            if count or self._graph.memories.by_scope.get(scope.key) or scope.key in self._graph.conversations.logs:
                self._commit([["delete_scope", scope.key]])
            return count

    def conversation(self, scope: Scope, limit: int) -> Conversation:
        with self._lock:
            self._begin()
            return self._graph.conversations.read(scope.key, limit)

    def set_summary(self, scope: Scope, text: str, through_seq: int, at: datetime) -> bool:
        with self._lock:
            self._begin()
            if not self._graph.conversations.summary_is_newer(scope.key, through_seq):
                return False
            self._commit([["summary", scope.key, text, through_seq, iso(at)]])
            return True

    # --- retention and erasure (stores/lifecycle.py) ----------------------------------------------

    def purge_expired(self, now: datetime, batch: int) -> Erased:
        return self._erase(lambda: lifecycle.plan_purge(self._graph, now, batch))

    def forget_scope(self, scope: Scope) -> Erased:
        return self._erase(lambda: lifecycle.plan_forget_scope(self._graph, scope))

    def forget_entity(self, scope: Scope, canonical: str, pattern: str) -> Erased:
        return self._erase(lambda: lifecycle.plan_forget_entity(self._graph, scope, canonical, pattern))

    def _erase(self, plan: Callable[[], tuple[list[Op], Erased]]) -> Erased:
        """Apply an erasure, then rewrite the snapshot and empty the journal: no file keeps the text."""
        with self._lock:
            self._begin()
            ops, erased = plan()
            if ops:
                self._commit(ops)
                try:
                    self._journal.write_snapshot(self._graph.snapshot())
                except StorageFullError:  # the erasure is durable in the journal; the next compaction drops the text
                    log.warning("erased, but %s has no room for a new snapshot yet: the erased text stays in its "
                                "files until the next compaction", self.path)
            return erased

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
                if self._journal.lines and not self.read_only:
                    self._journal.write_snapshot(self._graph.snapshot())
            except StoreError as exc:  # a full disk: the snapshot is an optimisation, the journal the record
                log.warning("closed %s without compacting it, and lost nothing (the next start loads the journal): %s",
                            self.path, exc)
            finally:
                self._journal.close()

    # --- durability -----------------------------------------------------------------------------

    def _commit(self, ops: list[Op]) -> None:
        try:
            with span("COMMIT", statement(EMBEDDED, "COMMIT", access="write"), "client"):
                self._journal.append({"ops": ops})  # durable first, then visible
        except WriteOutcomeUnknown:  # the record may stand in the journal: what the file holds is the truth
            self._reload()
            raise
        self._graph.apply(ops)
        self._compact_if_due()

    def _reload(self) -> None:
        """Rebuild the in-memory graph from the snapshot and journal (after a failed batch)."""
        self._graph = MemoryGraph(self.embedding_dims)
        self._journal.close()
        self._journal = Journal(self.path)
        self._load()

    def _compact_if_due(self) -> None:
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
        self._graph.memories.eager = True
        stored = [n for _, n in self._graph.graph.nodes(data=True)] + list(self._graph.memories.rows.values())
        for node in stored:
            if len(node["embedding"]) != self.embedding_dims:
                raise ConfigError(
                    f"graph store {self.path} holds {len(node['embedding'])}-dimensional embeddings, not the "
                    f"{self.embedding_dims} of the configured embedder: a store keeps the embedder it was built with. Give "
                    "this embedder its own folder (graph_store.config.path; from the shell: graphmem init --data-dir DIR "
                    "--force), or configure the embedder that built it"
                )
        identity.check(self.path, self.embedder_precision, bool(stored), self.read_only)

    def _begin(self) -> None:
        if self._closed:
            raise StoreError(f"graph store {self.path} is closed")
        self.round_trips += 1

    def _vector(self, values: list[float]) -> np.ndarray:
        if len(values) != self.embedding_dims:
            raise InvalidInputError(f"embedding has {len(values)} dimensions, the store expects {self.embedding_dims}")
        try:
            vector = np.array(values, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(f"an embedding must be a list of numbers: {exc}") from exc
        if vector.shape != (self.embedding_dims,):
            raise InvalidInputError(f"an embedding must be a flat list of {self.embedding_dims} numbers")
        return vector


# --- pure helpers ---------------------------------------------------------------------------


def _visible(d: Attrs, as_of: datetime | None, known_at: datetime | None, now: datetime) -> bool:
    return relation_visible(d["valid_at"], d["invalid_at"], d["created_at"], d["expired_at"], as_of, known_at, now)


def _with_facts(g: MemoryGraph, found: list[Relation], index: FactIndex, sims: np.ndarray, query: GraphQuery,
                keep: Callable[[Attrs], bool]) -> list[Relation]:
    """The seeded relations plus the scope's ``fact_top_k`` relations closest to the query by fact
    (score >= threshold, kept by ``keep``), each with ``scores["vector"]`` = its fact score (``sims``); best
    first, then fewer hops, ties oldest first (the seeded ones before the others)."""
    best = best_facts(index, sims, query.fact_top_k, query.threshold, lambda rid: (d := g.edge(rid)) is not None and keep(d))
    have = {r.id for r in found}
    extra = sorted((d for rid in best if rid not in have and (d := g.edge(rid)) is not None), key=lambda d: (d["created_at"], d["_seq"]))
    found += [g.relation(d, {"fulltext": 0.0, "seed": 0.0}) for d in extra]
    for rel in found:
        row = index.rows.get(rel.id)
        rel.scores["vector"] = float(sims[row]) if row is not None else 0.0
    found.sort(key=lambda r: (-max(r.scores.values()), r.hops))
    return found


def _top(scores: np.ndarray, mask: np.ndarray, top_k: int) -> list[int]:
    """Row numbers of the top_k scores among the masked rows, best first (ties: oldest first)."""
    if top_k <= 0 or not mask.any():
        return []
    rows = np.flatnonzero(mask)
    order = np.argsort(-scores[rows], kind="stable")[:top_k]
    return [int(rows[i]) for i in order]


def _vector_seeds(index: ScopeIndex, query: np.ndarray, q: GraphQuery) -> dict[str, float]:
    """Entity id -> cosine for the top_k entities with cosine >= threshold."""
    if not index.ids or q.top_k <= 0:
        return {}
    sims = index.matrix @ query
    best = [int(i) for i in np.argsort(-sims, kind="stable")[: q.top_k] if sims[i] >= q.threshold]
    return {index.ids[i]: float(sims[i]) for i in best}


def _fulltext_seeds(index: ScopeIndex, q: GraphQuery) -> dict[str, float]:
    """Entity id -> share of the name's word tokens found in the query text's words other than
    function words (schema.words.STOPWORDS: "the" must not match "the book fair"); top_k, > 0 only."""
    words = set(WORD.findall(q.text.casefold())) - STOPWORDS
    if not words or q.top_k <= 0:
        return {}
    scored = [(len(t & words) / len(t), i) for i, t in enumerate(index.tokens) if t & words]
    scored.sort(key=lambda s: -s[0])
    return {index.ids[i]: score for score, i in scored[: q.top_k]}
