"""The production graph store: Neo4j 5.26+ over Bolt, single server or cluster / Aura.

Every statement comes from cypher/ (see queries.py, memories.py, conversation.py); this module only
runs them. Reads go through ``execute_query`` routed to readers; an add runs in one transaction, the
one that holds its scope's lock (its log read, its resolve, its write_graph, then the commit: see
_held and _commit_held); every driver exception is translated into graphmem's errors at this
boundary (translate.py).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from datetime import datetime
from typing import Any, Literal, TypeVar

import neo4j
from neo4j import GraphDatabase, RoutingControl
from neo4j.exceptions import ConfigurationError, TransientError

from graphmem.errors import ConfigError, InvalidInputError, StoreError, StoreUnavailableError
from graphmem.schema.filters import Filter
from graphmem.stores.base import (
    AddContext,
    AddContextQuery,
    EntityCandidate,
    GraphQuery,
    GraphStore,
    MemoryQuery,
    RelationFact,
    Resolution,
    scope_of_key,
)
from graphmem.stores.lifecycle import Erased, is_expired
from graphmem.stores.memory_context import ContextQuery, MemoryContext
from graphmem.stores.neo4j import bulk as bulk_queries
from graphmem.stores.neo4j import (
    bulk_graph,
    cached_search,
    commits,
    embedder_record,
    lifecycle,
    partition,
    plans,
    queries,
    schema_check,
    single_pass,
    tracing,
    warm,
)
from graphmem.stores.neo4j import conversation as log_queries
from graphmem.stores.neo4j import memories as memory_queries
from graphmem.stores.neo4j.scope_cache import ScopeCache
from graphmem.stores.neo4j.translate import reason, redact_url, translated
from graphmem.stores.neo4j.values import Statement, VectorPlan
from graphmem.types import Conversation, Entity, GraphWrite, MemoryItem, Owners, Relation, Scope

log = logging.getLogger(__name__)
T = TypeVar("T")

#: The default matches OpenAI's text-embedding-3-small; pass the embedder's ``dims``.
DEFAULT_EMBEDDING_DIMS = 1536
#: Server notifications (warnings about plans, unknown labels in a fresh database, ...) are not for
#: graphmem's users: the driver would log them to stderr.
NOTIFICATIONS: Literal["OFF"] = "OFF"

__all__ = ["DEFAULT_EMBEDDING_DIMS", "Neo4jStore", "redact_url"]


class Neo4jStore(GraphStore):
    """Entities as ``(:Entity)`` nodes keyed by (scope, canonical); relations with their type as a
    real relationship type, bi-temporal properties and provenance; ``(:Memory)`` facts; a
    ``(:Conversation)`` log per scope. See cypher/ for every query."""

    concurrent_reads = True  # each thread's statement gets a connection of the driver's pool

    def __init__(
        self,
        url: str = "bolt://127.0.0.1:7687",
        username: str | None = None,
        password: str | None = None,
        database: str | None = None,
        embedding_dims: int = DEFAULT_EMBEDDING_DIMS,
        *,
        driver: neo4j.Driver | None = None,
        fetch_size: int = 1000,
        connection_timeout: float = 10.0,
        max_retry_time: float = 15.0,
        vector_plan: VectorPlan | None = None,
        search_relation_limit: int = 1000,
        index_wait_seconds: int = 300,
        warm_plans: bool = True,
        embedder_precision: str | None = None,
        relation_cache_mb: float = 256.0,
    ) -> None:
        if isinstance(embedding_dims, bool) or not isinstance(embedding_dims, int) or embedding_dims < 1:
            raise ConfigError(f"embedding_dims must be a positive integer, got {embedding_dims!r}")
        self.url = url
        self.username = username
        self.database = database
        self.embedding_dims = embedding_dims
        self.embedder_precision = embedder_precision  # refuse a database built at another (stores/precision.py)
        self.vector_plan = vector_plan or VectorPlan()
        self.search_relation_limit = search_relation_limit
        self.index_wait_seconds = index_wait_seconds
        self.warm_plans = warm_plans  # setup plans the add and search statements (stores/neo4j/warm.py)
        self._warmer: warm.Warmer | None = None
        # scopes' vectors for the relation half of search (scope_cache.py); 0: search_graph.cypher only
        self.relation_cache = ScopeCache(int(relation_cache_mb * 2**20)) if relation_cache_mb > 0 else None
        self.round_trips = 0
        #: for benchmarks, like round_trips: milliseconds the server reported for the statements run
        #: (planning + execution, commits not included), and spent inside the driver (commits included)
        self.server_ms = 0.0
        self.driver_ms = 0.0
        self._count_lock = threading.Lock()
        self._local = threading.local()  # .held: (scope key, transaction) while this thread holds a scope's lock
        # plans kept until the data grows, the next ones made in the background (plans.py)
        self.plans = plans.PlanGenerations(self._node_count, self._replan)
        self._planning = threading.local()  # .generation: the one a background replan plans on this thread
        self._owns_driver = driver is None
        if driver is None:
            driver = _open_driver(url, username, password, fetch_size, connection_timeout, max_retry_time)
        self._driver = driver

    def __repr__(self) -> str:
        return (
            f"Neo4jStore(url={redact_url(self.url)!r}, username={self.username!r}, "
            f"database={self.database!r}, embedding_dims={self.embedding_dims})"
        )

    # --- running statements ---------------------------------------------------------------------

    def _count(self) -> None:
        with self._count_lock:
            self.round_trips += 1

    def _served(self, summary: neo4j.ResultSummary) -> None:
        """Add a statement's server-reported time (planning and execution, until its last record:
        ``result_available_after`` + ``result_consumed_after``; commits are not in it) to server_ms."""
        ms = (summary.result_available_after or 0) + (summary.result_consumed_after or 0)
        with self._count_lock:
            self.server_ms += ms

    @contextmanager
    def _driving(self) -> Iterator[None]:
        """Time spent in the driver (sending, waiting for the server, commits, decoding) -> driver_ms."""
        started = time.perf_counter()
        try:
            yield
        finally:
            with self._count_lock:
                self.driver_ms += (time.perf_counter() - started) * 1000

    def _query(self, stmt: Statement, *, read: bool) -> list[neo4j.Record]:
        """One statement in its own managed transaction (one round trip)."""
        traced = tracing.statement_span(self.url, self.database, stmt, "read" if read else "write")
        with traced as span, translated(self.url, writing=not read), self._driving():
            self._count()
            text, params = self._args(stmt)
            records, summary, _ = self._driver.execute_query(
                text,
                params,
                routing_=RoutingControl.READ if read else RoutingControl.WRITE,
                database_=self.database,
            )
            self._served(summary)
            span.update(tracing.returned_rows(records))
            return records

    def _session(self, access: str = neo4j.WRITE_ACCESS) -> neo4j.Session:
        return self._driver.session(
            database=self.database,
            default_access_mode=access,
            bookmark_manager=self._driver.execute_query_bookmark_manager,
            notifications_min_severity=NOTIFICATIONS,
        )

    def _in_write_transaction(self, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        """``work`` in a managed write transaction, retried by the driver until it reaches COMMIT,
        never after: a failure from then on is WriteOutcomeUnknown (commits.py)."""
        attempts = commits.Attempts(work)
        with tracing.transaction_span(self.url, self.database, "transaction"), translated(self.url), self._driving(), \
                self._session() as session, self._committing(attempts):
            return session.execute_write(attempts)

    def _committing(self, attempts: commits.Attempts[T] | None) -> AbstractContextManager[None]:
        return commits.outcome_of(attempts, redact_url(self.url), lambda exc: reason(exc, self.url))

    def _run(self, tx: neo4j.ManagedTransaction | neo4j.Transaction, stmt: Statement) -> list[neo4j.Record]:
        with tracing.statement_span(self.url, self.database, stmt, "write") as span:
            self._count()
            result = tx.run(*self._args(stmt))
            rows = list(result)
            self._served(result.consume())  # every record is read: no round trip
            span.update(tracing.returned_rows(rows))
            return rows

    def _args(self, stmt: Statement) -> tuple[str, dict[str, Any]]:
        """What the server is sent: a packed statement keeps its plan, keyed to the plan generation
        (this thread's replan's, else the current one; plans.py)."""
        text, params = stmt.run_args()
        if stmt.packed:
            text = plans.tagged(text, getattr(self._planning, "generation", self.plans.current))
        return text, params

    def _node_count(self) -> int:
        return int(self._query(queries.node_count(), read=True)[0]["nodes"])

    def _replan(self, generation: int) -> bool:
        """Plan the add and search statements of ``generation`` on this (background) thread; without
        warm_plans they are planned on first use, as before."""
        if self.warm_plans:
            self._planning.generation = generation
            try:
                for group, read in warm.statements(self.embedding_dims, self.vector_plan, self.search_relation_limit):
                    if self.plans.stopping.is_set():
                        return False
                    self._plan_one(group, read)
            finally:
                del self._planning.generation
        return True

    def _write_one(self, stmt: Statement) -> neo4j.Record:
        """One write statement returning one row, in its own managed write transaction."""
        return self._in_write_transaction(lambda tx: self._run(tx, stmt)[0])

    def _check_dims(self, embedding: Sequence[float]) -> None:
        if len(embedding) != self.embedding_dims:
            raise InvalidInputError(f"embedding has {len(embedding)} dimensions, the store expects {self.embedding_dims}")

    # --- schema -----------------------------------------------------------------------------------

    def reach(self) -> None:
        """One connection attempt: an unreachable server fails now (StoreUnavailableError naming the
        URL), instead of after the driver's transaction retries (max_retry_time) with their log noise."""
        with translated(self.url):
            self._driver.verify_connectivity()

    def setup(self) -> None:
        self.reach()
        indexes = self._query(queries.show_indexes(), read=True)
        if not schema_check.is_current(indexes, schema_check.expected(queries.SCHEMA)):  # else each would be a no-op
            self._query(queries.summaries_keep_newest(), read=False)  # an earlier version's twins refuse the constraint
            for stmt in queries.schema(self.embedding_dims):
                self._query(stmt, read=False)
            indexes = self._query(queries.show_indexes(), read=True)
            self._query(queries.await_indexes(self.index_wait_seconds), read=False)
        self._check_vector_indexes([row for row in indexes if row["name"] in queries.VECTOR_INDEXES])
        embedder_record.check(f"{redact_url(self.url)} (database {self.database or 'default'})", self.embedder_precision,
                              self._query, self.read_only)
        self.plans.start(self._node_count())  # before the warming, so it plans this generation

    def warm(self) -> None:
        """With ``warm_plans``: plan the add and search statements on a background thread (warm.py),
        once per process and server; ``wait_warm`` waits for it. Memory starts it last in its
        constructor, so the thread does not share the interpreter with the rest of the set-up."""
        if not self.warm_plans:
            return
        key = (self.url, self.database)
        if key in warm.WARMED:
            return
        warm.WARMED.add(key)
        jobs = warm.statements(self.embedding_dims, self.vector_plan, self.search_relation_limit)
        self._warmer = warm.Warmer(jobs, self._plan_one, then=self._rehearse, interrupt=self._interrupt_warming).start()

    def _interrupt_warming(self) -> None:
        """End the warming's statement in flight (exit, close): its connection is shut. Only with a
        driver of our own: a caller's driver may run the caller's statements meanwhile."""
        if self._owns_driver:
            warm.shut_connections_in_use(self._driver)

    def wait_warm(self, timeout: float | None = None) -> bool:
        """Wait until this store's plan warming (if it started one) is over; True when it is."""
        return self._warmer is None or self._warmer.done.wait(timeout)

    def _plan_one(self, group: tuple[Statement, ...], read: bool) -> None:
        """Statements run together in one explicit transaction that is rolled back (planned in
        the transaction shape they run in, kept nothing). Explicit, not managed: the driver never
        retries it, so a statement interrupted at exit (Warmer.stop_at_exit) is not sent again."""
        access = neo4j.READ_ACCESS if read else neo4j.WRITE_ACCESS
        with translated(self.url, writing=not read), self._driving(), self._session(access) as session:
            tx = session.begin_transaction()
            try:
                for stmt in group:
                    self._run(tx, stmt)
            finally:
                tx.rollback()

    def _rehearse(self) -> None:
        """The end of the warming (warm.py): one add's write and one search for real, in a scope
        of their own that is deleted after, then the search's connections opened."""
        if not self.read_only:
            write, v = warm.rehearsal(self.embedding_dims)
            try:
                with self.scope_lock(write.scope):
                    self.write(write)
                hits = self.search_memories(write.scope, MemoryQuery(v, "warm up"))
                self.search_graph(write.scope, GraphQuery(v, "warm up", ["warm"]))
                self.memory_context(write.scope, ContextQuery(v, [m.id for m in hits]))
            finally:
                self.delete_all(write.scope)
        self._open_connections(SEARCH_READS)

    def ping(self) -> None:
        """One auto-commit ``ping`` statement: the driver retries only managed transactions, so a
        server that is down fails this at once instead of after ``max_retry_time``. A pooled
        connection the server dropped (a restart) fails once and leaves the pool: one more try."""
        for attempt in (1, 2):
            try:
                stmt = queries.ping()
                with tracing.statement_span(self.url, self.database, stmt, "write"), translated(self.url), \
                        self._session() as session:
                    self._count()
                    session.run(*stmt.run_args()).consume()
                return
            except StoreUnavailableError:
                if attempt == 2:
                    raise

    def _open_connections(self, count: int) -> None:
        """Leave ``count`` connections in the driver's pool: a search runs its memory and relation
        reads side by side, and its first run would otherwise open the second connection (8 ms of
        a 16-40 ms search, measured in docs/add-modes.md)."""
        with translated(self.url), ExitStack() as stack:
            transactions = [stack.enter_context(self._session()).begin_transaction() for _ in range(count)]
            for tx in transactions:
                self._run(tx, queries.ping())
                tx.rollback()

    def _check_vector_indexes(self, rows: list[neo4j.Record]) -> None:
        # IF NOT EXISTS leaves an existing index untouched, whatever its dimension
        found = {row["name"]: row for row in rows}
        for name in queries.VECTOR_INDEXES:
            label = "Entity" if name.startswith("entity") else "Memory"
            if name not in found:
                raise ConfigError(
                    f"no index named {name!r} after setup: another vector index on :{label}(embedding) "
                    "probably exists under a different name; drop it so graphmem can create its own"
                )
            index_type, dims = found[name]["type"], found[name]["dimensions"]
            if index_type != "VECTOR":
                raise ConfigError(f"index {name!r} exists but is a {index_type} index, not a vector index")
            if dims is not None and int(dims) != self.embedding_dims:
                raise ConfigError(
                    f"the Neo4j database's vector index {name!r} has {int(dims)} dimensions, but "
                    f"embedding_dims={self.embedding_dims}: the database was created with a different "
                    "embedder. Use that embedder, or another database, or drop the index (and re-embed)."
                )

    # --- the graph --------------------------------------------------------------------------------

    def match_entities(self, scope: Scope, candidates: list[EntityCandidate], threshold: float) -> list[Entity | None]:
        if not candidates:
            return []
        return self.resolve(scope, candidates, threshold, [], 0, 0).matches

    def resolve(
        self, scope: Scope, candidates: list[EntityCandidate], threshold: float, facts: list[list[float]], top_k: int,
        mention_limit: int,
    ) -> Resolution:
        """One statement (resolve.cypher) for the entities' matches, the relations around them and
        the memory candidates."""
        return self._resolve(scope, candidates, threshold, facts, top_k, [], mention_limit)

    def _resolve(
        self, scope: Scope, candidates: list[EntityCandidate], threshold: float, facts: list[list[float]], top_k: int,
        entity_ids: list[str], mention_limit: int,
    ) -> Resolution:
        for embedding in [c.embedding for c in candidates] + facts:
            self._check_dims(embedding)
        stmt = queries.resolve(scope, candidates, threshold, facts, top_k, entity_ids, mention_limit, self.vector_plan)
        held = self._held_tx(scope)
        if held is None:
            (row,) = self._query(stmt, read=True)
        else:  # an add under its scope's lock reads in the lock's transaction: no transaction of its own
            with translated(self.url), self._driving():
                (row,) = self._run(held, stmt)
        matches: list[Entity | None] = [None] * len(candidates)
        for hit in row["matches"]:
            if hit["entity"] is not None and hit["entity"].get("id") is not None:  # not deleted while read
                matches[hit["i"]] = queries.to_entity(hit["entity"], score=float(hit["score"]))
        similar: list[list[MemoryItem]] = [[] for _ in facts]
        for i, item in memory_queries.to_similar(row["similar"]):
            similar[i].append(item)
        return Resolution(
            matches,
            queries.to_relations(row["relations"]),
            similar,
            memory_queries.to_memories(row["mentioning"]),
            list(row["mention_ids"]),
        )

    def add_context(self, scope: Scope, query: AddContextQuery) -> AddContext:
        """One statement (single_pass_context.cypher), in the scope lock's transaction when held."""
        self._check_dims(query.embedding)
        stmt = single_pass.context_statement(scope, query, self.vector_plan)
        return single_pass.to_context(self._read_one(scope, stmt))

    def _read_one(self, scope: Scope, stmt: Statement) -> neo4j.Record:
        """A one-row read; an add under its scope's lock reads in the lock's transaction."""
        held = self._held_tx(scope)
        if held is None:
            (row,) = self._query(stmt, read=True)
            return row
        with translated(self.url), self._driving():
            (row,) = self._run(held, stmt)
        return row

    def relations_around(self, scope: Scope, entity_ids: list[str]) -> list[Relation]:
        if not entity_ids:
            return []
        return queries.to_relations(self._query(queries.relations_around(scope, entity_ids), read=True))

    def write(self, write: GraphWrite) -> None:
        if write.is_empty():
            return
        self._check_write_dims([write])
        held = self._held_tx(write.scope)
        # raises InvalidInputError for a malformed item: nothing written
        stmt = queries.write_graph(write, unlock=held is not None)
        attributes = queries.set_entity_attributes(write)

        def work(tx: neo4j.ManagedTransaction | neo4j.Transaction) -> neo4j.Record:
            row = self._run(tx, stmt)[0]
            if row["missing"]:
                # raising inside the transaction function rolls the whole add back
                raise InvalidInputError(
                    f"{row['missing']} relation endpoint(s) are not entities of scope {write.scope.key}; nothing was written"
                )
            if attributes is not None:
                self._run(tx, attributes)
            return row

        row = self._in_write_transaction(work) if held is None else self._commit_held(held, write.scope, work)
        self.plans.after_write()
        if row["scope_size"] > self.vector_plan.partition_size and not row["partitioned"]:
            self.partition_scope(write.scope)

    def _commit_held(
        self, tx: neo4j.Transaction, scope: Scope, work: Callable[[neo4j.ManagedTransaction | neo4j.Transaction], T]
    ) -> T:
        """An add's write in the transaction holding its scope's lock (it read there too), committed
        now: one transaction per add. A transient failure (deadlock, lock timeout) rolls it back and
        the write runs again in a managed transaction (retried by the driver) that takes the scope's
        database lock first; the in-process lock is held throughout."""
        with translated(self.url), self._driving():
            try:
                result = work(tx)
            except TransientError:
                log.info("the locked write of scope %s failed transiently; writing again in a managed transaction", scope.key)
                if not tx.closed():
                    tx.rollback()
            else:
                with self._committing(None), tracing.transaction_span(self.url, self.database, "COMMIT"):
                    tx.commit()  # COMMIT sent: a failure now is an unknown outcome, not a retry
                return result
        lock = queries.scope_lock(scope)

        def again(retry: neo4j.ManagedTransaction) -> T:
            self._run(retry, lock)
            return work(retry)

        return self._in_write_transaction(again)

    def write_many(self, writes: list[GraphWrite]) -> None:
        """One transaction for the batch: verbatim adds as one UNWIND statement, others one
        write_graph statement each (round trips grow with the writes, commits do not)."""
        writes = [w for w in writes if not w.is_empty()]
        if not writes:
            return
        self._check_write_dims(writes)
        if all(bulk_queries.is_verbatim(w) for w in writes):
            stmt = bulk_queries.write_verbatim(writes)
            self._in_write_transaction(lambda tx: self._run(tx, stmt))
            return
        if bulk_graph.creates_only(writes) and self._write_created(writes):
            return
        stmts = [queries.write_graph(w) for w in writes]

        def work(tx: neo4j.ManagedTransaction) -> list[neo4j.Record]:
            rows = [self._run(tx, stmt)[0] for stmt in stmts]
            missing = sum(int(row["missing"]) for row in rows)
            if missing:
                raise InvalidInputError(f"{missing} relation endpoint(s) are not entities of their scope; nothing was written")
            return rows

        rows = self._in_write_transaction(work)
        self.plans.after_write()
        for w, row in zip(writes, rows, strict=True):
            if row["scope_size"] > self.vector_plan.partition_size and not row["partitioned"]:
                self.partition_scope(w.scope)

    def _write_created(self, writes: list[GraphWrite]) -> bool:
        """A create-only batch as one statement (bulk_graph.py); False, with nothing written, when
        it names a stored entity after all (the caller then writes it through write_graph)."""
        stmt = bulk_graph.write_created(writes)
        try:
            rows = self._in_write_transaction(lambda tx: bulk_graph.run(tx, stmt, self._count))
        except bulk_graph.NotCreateOnly:
            return False
        scopes = {w.scope.key: w.scope for w in writes}
        for row in rows:
            if row["scope_size"] > self.vector_plan.partition_size and not row["partitioned"]:
                self.partition_scope(scopes[row["scope"]])
        return True

    def _check_write_dims(self, writes: list[GraphWrite]) -> None:
        for w in writes:
            for entity in w.entities:
                self._check_dims(entity.embedding)
            for memory in w.memories:
                if memory.embedding is not None:
                    self._check_dims(memory.embedding)
            for rel in w.relations:
                if rel.fact_embedding is not None:
                    self._check_dims(rel.fact_embedding)

    def imported_keys(self, keys: list[str]) -> set[str]:
        if not keys:
            return set()
        return {row["key"] for row in self._query(bulk_queries.imported_keys(keys), read=True)}

    def idempotent_outcome(self, key: str) -> str | None:
        rows = self._query(bulk_queries.idempotent_outcome(key), read=True)  # causal: the driver's bookmarks follow its writes
        return str(rows[0]["outcome"]) if rows and rows[0]["outcome"] is not None else None

    def partition_scope(self, scope: Scope) -> None:
        """Give the scope a vector index of its own (once; see partition.py). Done after a write
        that took the scope past VectorPlan.partition_size; a failure is logged and searches keep
        using the global index."""
        try:
            for stmt in partition.create_indexes(scope, self.embedding_dims):
                self._query(stmt, read=False)
            self._query(partition.label_scope(scope, record=False), read=False)
            for stmt in partition.await_indexes(scope, self.index_wait_seconds):
                self._query(stmt, read=False)
            self._query(partition.label_scope(scope, record=True), read=False)  # again: nodes created meanwhile
        except StoreError:
            log.warning("could not partition scope %s; searches keep using the global index", scope.key, exc_info=True)

    def search_graph(self, scope: Scope, query: GraphQuery) -> list[Relation]:
        if query.embedding:
            self._check_dims(query.embedding)
        if self.relation_cache is not None and cached_search.applies(scope, query):
            found = cached_search.search(
                lambda stmt: self._query(stmt, read=True), self.relation_cache, scope, query, self.vector_plan,
                self.embedding_dims, self.search_relation_limit,
            )
            if found is not None:
                return found
        stmt = queries.search_graph(scope, query, self.vector_plan, self.search_relation_limit)
        return queries.to_relations(self._query(stmt, read=True))

    def set_relation_facts(self, scope: Scope, facts: list[RelationFact]) -> int:
        if not facts:
            return 0
        for f in facts:
            self._check_dims(f.embedding)
        return int(self._write_one(queries.set_relation_facts(scope, facts))["updated"])

    def scopes(self) -> list[Scope]:
        return [scope_of_key(row["scope"]) for row in self._query(queries.scopes(), read=True)]

    def timeline(self, scope: Scope, canonical: str) -> list[Relation]:
        return queries.to_relations(self._query(queries.timeline(scope, canonical), read=True))

    def get_all(
        self, scope: Scope, include_invalidated: bool = False, limit: int | None = None, filters: Filter | None = None
    ) -> list[Relation]:
        return queries.to_relations(self._query(queries.get_all(scope, include_invalidated, limit, flt=filters), read=True))

    def entities(self, scope: Scope) -> list[Entity]:
        return [queries.to_entity(row["entity"]) for row in self._query(queries.entities(scope), read=True)]

    # --- memory facts -------------------------------------------------------------------------------

    def similar_memories(self, scope: Scope, embeddings: list[list[float]], top_k: int = 5) -> list[list[MemoryItem]]:
        return self.memory_candidates(scope, embeddings, top_k, [])[0]

    def memory_candidates(
        self, scope: Scope, embeddings: list[list[float]], top_k: int, entity_ids: list[str], mention_limit: int = 20
    ) -> tuple[list[list[MemoryItem]], list[MemoryItem]]:
        if not entity_ids and (not embeddings or top_k <= 0):
            return [[] for _ in embeddings], []
        found = self._resolve(scope, [], 0.0, embeddings, top_k, entity_ids, mention_limit)
        return found.similar, found.mentioning

    def search_memories(self, scope: Scope, query: MemoryQuery) -> list[MemoryItem]:
        self._check_dims(query.embedding)
        if query.top_k <= 0:
            return []
        return memory_queries.to_hits(self._query(memory_queries.search_memories(scope, query, self.vector_plan), read=True))

    def memory_context(self, scope: Scope, query: ContextQuery) -> MemoryContext:
        self._check_dims(query.embedding)
        (row,) = self._query(memory_queries.memory_context(scope, query), read=True)
        return memory_queries.to_context(row)

    def get_memory(self, memory_id: str, owners: Owners | None = None) -> MemoryItem | None:
        rows = self._query(memory_queries.get_memory(memory_id, owners), read=True)
        item = next(iter(memory_queries.to_memories(rows, "memory")), None)
        return None if item is None or is_expired(item.expires_at) else item

    def list_memories(
        self, scope: Scope, include_deleted: bool = False, limit: int | None = None, filters: Filter | None = None
    ) -> list[MemoryItem]:
        rows = self._query(memory_queries.list_memories(scope, include_deleted, limit, filters), read=True)
        return memory_queries.to_memories(rows, "memory")

    def delete_memory(self, memory_id: str) -> bool:
        return int(self._write_one(memory_queries.delete_memory(memory_id))["deleted"]) > 0

    # --- conversation log ---------------------------------------------------------------------------

    def conversation(self, scope: Scope, limit: int) -> Conversation:
        (row,) = self._query(log_queries.conversation(scope, limit), read=True)
        return log_queries.to_conversation(row)

    def set_summary(self, scope: Scope, text: str, through_seq: int, at: datetime) -> bool:
        return bool(self._write_one(log_queries.set_summary(scope, text, through_seq, at))["newer"])

    # --- per-scope write lock ------------------------------------------------------------------------

    @contextmanager
    def scope_lock(self, scope: Scope) -> Iterator[None]:
        """The in-process lock, then the scope's database lock (scope_lock.cypher) held in an open
        transaction until the block ends: adds of one scope queue across processes too."""
        with self._held(scope, queries.scope_lock(scope)):
            yield

    @contextmanager
    def locked_conversation(self, scope: Scope, limit: int | None) -> Iterator[Conversation]:
        """scope_lock, and the conversation read in the lock's transaction: no transaction of its own.
        A statement of its own: in one statement with the lock's MERGE, its lookup of the scope's
        (:Conversation) would become a locking unique-index seek, held through the add's LLM calls
        (a verbatim add creating that conversation meanwhile would wait for them)."""
        if limit is None:
            with self.scope_lock(scope):
                yield Conversation()
            return
        with self._held(scope, queries.scope_lock(scope), log_queries.conversation(scope, limit)) as rows:
            yield log_queries.to_conversation(rows[0])

    @contextmanager
    def _held(self, scope: Scope, lock: Statement, read: Statement | None = None) -> Iterator[list[neo4j.Record]]:
        """The in-process lock, then ``lock`` (it takes the database lock) and ``read`` in a
        transaction left open until the block ends; yields ``read``'s rows. Meanwhile resolve and
        write of ``scope`` in this thread run in it (_held_tx), and write commits it; a block that
        wrote nothing rolls it back."""
        with super().scope_lock(scope):
            with translated(self.url), self._driving():
                session = self._session()  # with the bookmark manager: later reads see a write committed here
                try:
                    tx = session.begin_transaction()
                    self._run(tx, lock)
                    rows = [] if read is None else self._run(tx, read)
                except BaseException:
                    session.close()
                    raise
            outer = getattr(self._local, "held", None)
            self._local.held = (scope.key, tx)
            try:
                yield rows
            finally:
                self._local.held = outer
                try:
                    with self._driving():
                        if not tx.closed():  # committed by write (_commit_held), else nothing was written
                            tx.rollback()
                        session.close()
                except Exception:  # noqa: BLE001 - the lock ends with the transaction either way
                    log.warning("could not release the lock of scope %s cleanly", scope.key, exc_info=True)

    def _held_tx(self, scope: Scope) -> neo4j.Transaction | None:
        """The open transaction holding ``scope``'s lock in this thread (see _held), if any."""
        held = getattr(self._local, "held", None)
        if held is None or held[0] != scope.key or held[1].closed():
            return None
        tx: neo4j.Transaction = held[1]
        return tx

    # --- retention and erasure (stores/lifecycle.py) -------------------------------------------------

    def purge_expired(self, now: datetime, batch: int) -> Erased:
        return lifecycle.to_erased(self._write_one(lifecycle.purge_expired(now, batch)))

    def forget_scope(self, scope: Scope) -> Erased:
        return lifecycle.to_erased(self._write_one(lifecycle.forget_scope(scope)))

    def forget_entity(self, scope: Scope, canonical: str, pattern: str) -> Erased:
        return lifecycle.to_erased(self._write_one(lifecycle.forget_entity(scope, canonical, pattern)))

    # --- removal ------------------------------------------------------------------------------------

    def delete_all(self, scope: Scope) -> int:
        return int(self._write_one(queries.delete_all(scope))["deleted"])

    def reset(self) -> None:
        stmt = queries.reset()
        with tracing.statement_span(self.url, self.database, stmt, "write"), translated(self.url), self._session() as session:
            self._count()
            # CALL ... IN TRANSACTIONS only runs in an auto-commit transaction
            session.run(*stmt.run_args()).consume()

    def close(self) -> None:
        if self._warmer is not None:
            # the warmer's statement in flight uses a pooled connection: closing the driver under it made
            # the driver raise BufferError (a connection written by two threads); it is ended, then waited for
            self._warmer.stop_at_exit(WARM_CLOSE_WAIT)
        self.plans.stop(WARM_CLOSE_WAIT)
        if self._owns_driver:
            with translated(self.url):
                self._driver.close()


#: statements a search runs side by side (memories, relations): the connections warming leaves open
SEARCH_READS = 2

#: seconds close() waits for the statement the plan warmer is running (one statement, planned once)
WARM_CLOSE_WAIT = 30.0


BOLT_SCHEMES = ("bolt", "bolt+s", "bolt+ssc", "neo4j", "neo4j+s", "neo4j+ssc")


def _open_driver(url: str, username: str | None, password: str | None, fetch_size: int,
                 connection_timeout: float, max_retry_time: float) -> neo4j.Driver:
    """A driver of our own; a bad address or setting is a ConfigError naming the redacted url."""
    auth = None if username is None else neo4j.basic_auth(username, password or "")
    scheme = url.partition("://")[0].lower()
    if scheme not in BOLT_SCHEMES:  # the driver would try its HTTP query API, which needs aiohttp
        raise ConfigError(f"Neo4j url {redact_url(url)} must start with {', '.join(s + '://' for s in BOLT_SCHEMES)} "
                          "(graphmem speaks Bolt, port 7687 by default; http:// is Neo4j's HTTP port)")
    try:
        return GraphDatabase.driver(
            url,
            auth=auth,
            connection_timeout=connection_timeout,
            max_transaction_retry_time=max_retry_time,
            fetch_size=fetch_size,
            user_agent="graphmem",
            notifications_min_severity=NOTIFICATIONS,
        )
    except (ConfigurationError, ValueError) as exc:
        raise ConfigError(f"invalid Neo4j configuration for {redact_url(url)}: {reason(exc, url)}") from None
