"""The Neo4j store's retention and erasure statements (stores/lifecycle.py describes them)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from graphmem.stores.lifecycle import Erased
from graphmem.stores.neo4j.values import Statement, utc
from graphmem.types import Scope


def purge_expired(now: datetime, batch: int) -> Statement:
    return Statement("purge_expired", {"now": utc(now), "batch": int(batch)})


def forget_scope(scope: Scope) -> Statement:
    return Statement("forget_scope", {**scope.properties(), "scope": scope.key, "whole": not scope.narrowing})


def forget_entity(scope: Scope, canonical: str, pattern: str) -> Statement:
    return Statement("forget_entity", {**scope.properties(), "scope": scope.key, "canonical": canonical, "pattern": pattern})


def to_erased(row: Mapping[str, Any]) -> Erased:
    return Erased(
        memory_ids=list(row["memory_ids"] or []),
        entities=int(row.get("entities") or 0),
        messages=int(row.get("messages") or 0),
        summaries=int(row.get("summaries") or 0),
    )
