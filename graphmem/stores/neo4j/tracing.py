"""The Neo4j store's spans: one per statement (named by its cypher/ file) and per transaction.

A statement's span carries ``db.query.text``: the cypher/ file as written, which holds no user data
(values travel as parameters, never recorded; statements with checked names or filters filled in
are recorded as their file too). Built only when the call is traced (observability.lazy_span).
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from typing import Any

from graphmem.observability import Span, lazy_span
from graphmem.observability.conventions import NEO4J, returned_rows, server_attributes, statement
from graphmem.schema.resources import load_cypher
from graphmem.stores.neo4j.values import Statement

BOLT_PORT = 7687

__all__ = ["returned_rows", "statement_span", "transaction_span"]


def statement_span(url: str | None, database: str | None, stmt: Statement, access: str) -> AbstractContextManager[Span]:
    """The span of one statement (``access``: read or write, as routed)."""

    def build() -> tuple[str, dict[str, Any]]:
        return stmt.name, {**statement(NEO4J, stmt.name, load_cypher(stmt.name), database, access),
                           **server_attributes(url, BOLT_PORT)}

    return lazy_span(build, "client")


def transaction_span(url: str, database: str | None, operation: str) -> AbstractContextManager[Span]:
    """A transaction's span (``transaction``: its statements are children) or its ``COMMIT``."""

    def build() -> tuple[str, dict[str, Any]]:
        return operation, {**statement(NEO4J, operation, None, database, "write"), **server_attributes(url, BOLT_PORT)}

    return lazy_span(build, "client")
