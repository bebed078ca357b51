"""The Neo4j store's record of its embedder's precision (stores/precision.py): one
``(:EmbedderRecord)`` node, read and written by cypher/embedder_precision.cypher and
cypher/record_embedder_precision.cypher."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphmem.stores import precision as record
from graphmem.stores.neo4j.values import Statement


def read() -> Statement:
    return Statement("embedder_precision", {})


def write(precision: str) -> Statement:
    return Statement("record_embedder_precision", {"precision": precision})


def check(where: str, precision: str | None, query: Callable[..., list[Any]], read_only: bool) -> None:
    """Refuse ``precision`` for a database whose vectors were made at another; record it on an empty one."""
    if precision is None:
        return
    rows = query(read(), read=True)
    built = rows[0]["precision"] if rows else None
    holds = bool(rows[0]["holds_vectors"]) if rows else False
    if record.settle(where, built if isinstance(built, str) else None, precision, holds) and not read_only:
        query(write(precision), read=False)
