"""The production graph store: Neo4j 5.26+ over Bolt, single server or cluster / Aura.

Every statement comes from cypher/ (see queries.py); this module only runs them. Reads go through
``execute_query`` routed to readers, an add runs in one managed write transaction, and every driver
exception is translated into graphmem's errors at this boundary.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

import neo4j
from neo4j import GraphDatabase, RoutingControl
from neo4j.exceptions import (
    AuthError,
    ConfigurationError,
    DatabaseUnavailable,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)

from graphmem.errors import ConfigError, GraphMemError, InvalidInputError, StoreError, StoreUnavailableError
from graphmem.stores.base import EntityCandidate, GraphQuery, GraphStore
from graphmem.stores.neo4j import queries
from graphmem.stores.neo4j.queries import Statement, VectorPlan
from graphmem.types import Entity, GraphWrite, Relation, Scope

T = TypeVar("T")

#: The default matches OpenAI's text-embedding-3-small; pass the embedder's ``dims``.
DEFAULT_EMBEDDING_DIMS = 1536
_UNAVAILABLE = (ServiceUnavailable, SessionExpired, AuthError, DatabaseUnavailable)


def redact_url(url: str) -> str:
    """The URL without any user:password part, for messages and repr."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<invalid url>"
    if "@" not in parts.netloc:
        return url
    return urlunsplit(parts._replace(netloc=parts.netloc.rsplit("@", 1)[1]))


def _reason(exc: BaseException, url: str | None = None) -> str:
    """A short, single-line reason; server errors carry theirs in ``message``."""
    text = (exc.message if isinstance(exc, Neo4jError) else None) or str(exc) or type(exc).__name__
    text = " ".join(str(text).split())
    if url and url != redact_url(url):
        text = text.replace(url, redact_url(url))
    return text if len(text) <= 300 else text[:297] + "..."


class Neo4jStore(GraphStore):
    """Entities as ``(:Entity)`` nodes keyed by (scope, canonical); relations with their type as a
    real relationship type, bi-temporal properties and provenance. See cypher/ for every query."""

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
    ) -> None:
        if isinstance(embedding_dims, bool) or not isinstance(embedding_dims, int) or embedding_dims < 1:
            raise ConfigError(f"embedding_dims must be a positive integer, got {embedding_dims!r}")
        self.url = url
        self.username = username
        self.database = database
        self.embedding_dims = embedding_dims
        self.vector_plan = vector_plan or VectorPlan()
        self.search_relation_limit = search_relation_limit
        self.index_wait_seconds = index_wait_seconds
        self.round_trips = 0
        self._count_lock = threading.Lock()
        self._owns_driver = driver is None
        if driver is None:
            auth = None if username is None else neo4j.basic_auth(username, password or "")
            try:
                driver = GraphDatabase.driver(
                    url,
                    auth=auth,
                    connection_timeout=connection_timeout,
                    max_transaction_retry_time=max_retry_time,
                    fetch_size=fetch_size,
                    user_agent="graphmem",
                )
            except (ConfigurationError, ValueError) as exc:
                raise ConfigError(f"invalid Neo4j configuration for {redact_url(url)}: {_reason(exc, url)}") from None
        self._driver = driver

    def __repr__(self) -> str:
        return (
            f"Neo4jStore(url={redact_url(self.url)!r}, username={self.username!r}, "
            f"database={self.database!r}, embedding_dims={self.embedding_dims})"
        )

    # --- running statements ---------------------------------------------------------------------

    @contextmanager
    def _translated(self) -> Iterator[None]:
        try:
            yield
        except GraphMemError:
            raise
        except _UNAVAILABLE as exc:
            raise StoreUnavailableError(f"Neo4j is unreachable at {redact_url(self.url)}: {_reason(exc, self.url)}") from exc
        except (Neo4jError, DriverError) as exc:
            code = getattr(exc, "code", None)
            prefix = f"{code}: " if code else ""
            raise StoreError(f"Neo4j query failed: {prefix}{_reason(exc, self.url)}") from exc
        except OSError as exc:
            raise StoreUnavailableError(f"Neo4j is unreachable at {redact_url(self.url)}: {_reason(exc, self.url)}") from exc

    def _count(self) -> None:
        with self._count_lock:
            self.round_trips += 1

    def _query(self, stmt: Statement, *, read: bool) -> list[neo4j.Record]:
        """One statement in its own managed transaction (one round trip)."""
        with self._translated():
            self._count()
            records, _, _ = self._driver.execute_query(
                stmt.text,
                dict(stmt.params),
                routing_=RoutingControl.READ if read else RoutingControl.WRITE,
                database_=self.database,
            )
            return records

    def _in_write_transaction(self, work: Callable[[neo4j.ManagedTransaction], T]) -> T:
        with self._translated():
            with self._driver.session(
                database=self.database, bookmark_manager=self._driver.execute_query_bookmark_manager
            ) as session:
                return session.execute_write(work)

    def _run(self, tx: neo4j.ManagedTransaction, stmt: Statement) -> list[neo4j.Record]:
        self._count()
        return list(tx.run(stmt.text, dict(stmt.params)))

    def _check_dims(self, embedding: Sequence[float]) -> None:
        if len(embedding) != self.embedding_dims:
            raise InvalidInputError(f"embedding has {len(embedding)} dimensions, the store expects {self.embedding_dims}")

    # --- the store contract ---------------------------------------------------------------------

    def setup(self) -> None:
        for stmt in queries.schema(self.embedding_dims):
            self._query(stmt, read=False)
        self._check_vector_index(self._query(queries.show_entity_embedding_index(), read=True))
        self._query(queries.await_indexes(self.index_wait_seconds), read=False)

    def _check_vector_index(self, rows: list[neo4j.Record]) -> None:
        # IF NOT EXISTS leaves an existing index untouched, whatever its dimension
        if not rows:
            raise ConfigError(
                "no index named 'entity_embedding' after setup: another vector index on :Entity(embedding) "
                "probably exists under a different name; drop it so graphmem can create its own"
            )
        index_type, dims = rows[0]["type"], rows[0]["dimensions"]
        if index_type != "VECTOR":
            raise ConfigError(f"index 'entity_embedding' exists but is a {index_type} index, not a vector index")
        if dims is not None and int(dims) != self.embedding_dims:
            raise ConfigError(
                f"the Neo4j database's vector index 'entity_embedding' has {int(dims)} dimensions, but "
                f"embedding_dims={self.embedding_dims}: the database was created with a different "
                "embedder. Use that embedder, or another database, or drop the index (and re-embed)."
            )

    def match_entities(self, scope: Scope, candidates: list[EntityCandidate], threshold: float) -> list[Entity | None]:
        if not candidates:
            return []
        for candidate in candidates:
            self._check_dims(candidate.embedding)
        rows = self._query(queries.match_entities(scope, candidates, threshold, self.vector_plan), read=True)
        found: list[Entity | None] = [None] * len(candidates)
        for row in rows:
            if row["entity"] is not None:
                found[row["i"]] = queries.to_entity(row["entity"], score=float(row["score"]))
        return found

    def relations_around(self, scope: Scope, entity_ids: list[str]) -> list[Relation]:
        if not entity_ids:
            return []
        rows = self._query(queries.relations_around(scope, entity_ids), read=True)
        return [queries.to_relation(row) for row in rows]

    def write(self, write: GraphWrite) -> None:
        if write.is_empty():
            return
        if write.memories:
            # refuse rather than silently drop part of an add
            raise NotImplementedError("Neo4jStore does not store memory facts yet")
        for entity in write.entities:
            self._check_dims(entity.embedding)
        stmt = queries.write_graph(write)

        def work(tx: neo4j.ManagedTransaction) -> None:
            missing = self._run(tx, stmt)[0]["missing"]
            if missing:
                # raising inside the transaction function rolls the whole add back
                raise InvalidInputError(
                    f"{missing} relation endpoint(s) are not entities of scope {write.scope.key}; nothing was written"
                )

        self._in_write_transaction(work)

    def search_graph(self, scope: Scope, query: GraphQuery) -> list[Relation]:
        if query.embedding:
            self._check_dims(query.embedding)
        stmt = queries.search_graph(scope, query, self.vector_plan, self.search_relation_limit)
        return [queries.to_relation(row) for row in self._query(stmt, read=True)]

    def get_all(self, scope: Scope, include_invalidated: bool = False, limit: int | None = None) -> list[Relation]:
        rows = self._query(queries.get_all(scope, include_invalidated, limit), read=True)
        return [queries.to_relation(row) for row in rows]

    def entities(self, scope: Scope) -> list[Entity]:
        return [queries.to_entity(row["entity"]) for row in self._query(queries.entities(scope), read=True)]

    def delete_all(self, scope: Scope) -> int:
        stmt = queries.delete_all(scope)
        return self._in_write_transaction(lambda tx: int(self._run(tx, stmt)[0]["deleted"]))

    def reset(self) -> None:
        stmt = queries.reset()
        with self._translated():
            with self._driver.session(
                database=self.database, bookmark_manager=self._driver.execute_query_bookmark_manager
            ) as session:
                self._count()
                # CALL ... IN TRANSACTIONS only runs in an auto-commit transaction
                session.run(stmt.text, dict(stmt.params)).consume()

    def close(self) -> None:
        if self._owns_driver:
            with self._translated():
                self._driver.close()
