"""The Neo4j store's memory-fact statements: what an add writes to (:Memory) nodes, the reads, and
how their rows read back.

A memory keeps its whole metadata as a JSON string (``metadata``) and, for filtering, every top-level
scalar value also as a property named ``meta.<key>``. The key is user input: it only ever travels as
a map key or a parameter value (``m += $meta``, ``m[$key]``), never as query text.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from graphmem.errors import InvalidInputError
from graphmem.schema.filters import Filter, equalities, scoped
from graphmem.stores.base import MemoryQuery
from graphmem.stores.memory_context import ContextQuery, MemoryContext, Neighbour
from graphmem.stores.neo4j.filters import META_PREFIX, filtered
from graphmem.stores.neo4j.values import (
    Statement,
    VectorPlan,
    from_db_time,
    fulltext_terms,
    limit_value,
    lucene_escape,
    utc,
    vector,
)
from graphmem.types import GraphWrite, MemoryItem, MemoryWrite, Owners, Scope, TimeSpan, turn_key, utcnow

MEMORY_EVENTS = ("ADD", "UPDATE", "DELETE")
_INT64 = (-(2**63), 2**63 - 1)


# --- metadata ---------------------------------------------------------------------------------------


def metadata_json(metadata: Any) -> str:
    """The metadata as stored: a JSON object, or a clear error before anything is written."""
    try:
        text = json.dumps(metadata, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"memory metadata must be JSON-serialisable: {exc}") from exc
    if not isinstance(metadata, dict):
        raise InvalidInputError(f"memory metadata must be a JSON object, got {type(metadata).__name__}")
    return text


def storable_scalar(value: Any) -> bool:
    """True for a value Neo4j stores as a property and compares like Python: str, bool, int64, finite float."""
    if isinstance(value, (str, bool)):
        return True
    if isinstance(value, int):
        return _INT64[0] <= value <= _INT64[1]
    return isinstance(value, float) and math.isfinite(value)


def meta_properties(metadata_text: str) -> dict[str, Any]:
    """``meta.<key>`` -> value for each top-level scalar of the metadata (as it reads back from JSON)."""
    return {META_PREFIX + key: value for key, value in json.loads(metadata_text).items() if storable_scalar(value)}


# --- writes -------------------------------------------------------------------------------------------


def memory_rows(write: GraphWrite, canonical_of: Mapping[str, str]) -> list[dict[str, Any]]:
    """The $memories parameter of write_graph.cypher; raises InvalidInputError for a malformed item."""
    return [{**_memory_row(m, seq, canonical_of), **said_properties(m, write.at)} for seq, m in enumerate(write.memories)]


def said_properties(m: MemoryWrite, at: datetime) -> dict[str, Any]:
    """A message memory's said_at and turn (its place in the conversation, types.turn_key) and the
    text's resolved times: ``times`` JSON (null: keep the stored ones) and their overall range."""
    said_at = m.said_at
    times = m.times if m.times is not None else ([] if m.event == "ADD" else None)
    return {
        "said_at": utc(said_at),
        "turn": None if said_at is None else turn_key(said_at, at, m.position),
        "times": None if times is None else json.dumps([t.to_dict() for t in times]),
        "time_from": utc(min(t.start for t in times)) if times else None,
        "time_to": utc(max(t.end for t in times)) if times else None,
    }


def _memory_row(m: MemoryWrite, seq: int, canonical_of: Mapping[str, str]) -> dict[str, Any]:
    if m.event not in MEMORY_EVENTS:
        raise InvalidInputError(f"unknown memory event {m.event!r}; expected one of {', '.join(MEMORY_EVENTS)}")
    if m.event != "DELETE" and m.embedding is None:
        raise InvalidInputError(f"memory {m.event} of {m.id!r} has no embedding")
    metadata = None
    if m.event == "ADD" or m.metadata is not None:
        metadata = metadata_json(m.metadata or {})
    return {
        "event": m.event,
        "id": m.id,
        "text": m.text,
        "hash": m.hash,
        "embedding": None if m.embedding is None else vector(m.embedding),
        "metadata": metadata,
        "meta": {} if metadata is None else meta_properties(metadata),
        "role": m.role,
        "expires_at": utc(m.expires_at),
        "seq": seq,
        "valid_at": utc(m.valid_at),
        "invalid_at": utc(m.invalid_at),
        "created_at": utc(m.created_at),
        "mentions": [{"id": i, "canonical": canonical_of.get(i)} for i in dict.fromkeys(m.entity_ids)],
    }


# --- reads --------------------------------------------------------------------------------------------


def search_memories(scope: Scope, query: MemoryQuery, plan: VectorPlan) -> Statement:
    top_k = max(0, int(query.top_k))
    flt = scoped(scope, query.filters, "memory")
    has_filter = flt is not None
    # hits of other scopes and dead memories are dropped after Lucene: ask for a few extra, or for
    # every hit when filters or time can make eligible ones rare
    scarce = has_filter or query.as_of is not None or query.known_at is not None
    return filtered(
        "search_memories",
        {
            "scope": scope.key,
            "embedding": vector(query.embedding),
            "top_k": top_k,
            "scan_limit": plan.scan_limit,
            "max_k": plan.max_k,
            "fulltext_terms": fulltext_terms(query.text or ""),
            "fulltext_scope": lucene_escape(scope.key),
            "fulltext_options": {} if scarce else {"limit": top_k * plan.fulltext_k + 10},
            "filtered": has_filter,
            "as_of": utc(query.as_of),
            "now": utc(utcnow()),
            "known_at": utc(query.known_at),
        },
        flt,
        "memory",
    )


def get_memory(memory_id: str, owners: Owners | None = None) -> Statement:
    return Statement("get_memory", {"id": memory_id, "owners": None if owners is None else owners.parameters()})


def list_memories(scope: Scope, include_deleted: bool, limit: int | None, flt: Filter | None = None) -> Statement:
    params = {"scope": scope.key, "include_deleted": bool(include_deleted), "limit": limit_value(limit), "now": utc(utcnow())}
    return filtered("list_memories", params, scoped(scope, flt, "memory"), "memory")


def delete_memory(memory_id: str) -> Statement:
    return Statement("delete_memory", {"id": memory_id})


# --- rows ---------------------------------------------------------------------------------------------


def is_live(memory: Mapping[str, Any] | None) -> bool:
    """A memory map read from a node that still exists. Under read committed, a node another
    transaction deletes while a statement reads it (a search beside a delete) comes back with every
    property null: such a row is no memory, and is dropped rather than shown as an id-less hit."""
    return memory is not None and memory.get("id") is not None and memory.get("text") is not None


def to_memories(rows: Iterable[Mapping[str, Any]], key: str | None = None) -> list[MemoryItem]:
    """The live memories of ``rows`` (each the memory map, or holding it under ``key``)."""
    maps = (row if key is None else row[key] for row in rows)
    return [to_memory(m) for m in maps if is_live(m)]


def to_hits(rows: Iterable[Mapping[str, Any]]) -> list[MemoryItem]:
    """search_memories.cypher's rows: the live memories with their vector and fulltext scores."""
    return [to_memory(row["memory"], {"vector": float(row["vector"]), "fulltext": float(row["fulltext"])})
            for row in rows if is_live(row["memory"])]


def to_similar(hits: Iterable[Mapping[str, Any]]) -> list[tuple[int, MemoryItem]]:
    """resolve's ``similar`` hits: (fact index, live memory with its cosine)."""
    return [(int(hit["i"]), to_memory(hit["memory"], {"vector": float(hit["cosine"])}))
            for hit in hits if is_live(hit["memory"])]


def to_memory(row: Mapping[str, Any], scores: dict[str, float] | None = None) -> MemoryItem:
    """A memory map as the contract returns it; ``score`` is the cosine when scores are given."""
    created: datetime | None = from_db_time(row.get("created_at"))
    return MemoryItem(
        id=row["id"], text=row.get("text") or "", hash=row.get("hash") or "", user_id=row.get("user_id"),
        agent_id=row.get("agent_id"), run_id=row.get("run_id"), metadata=json.loads(row.get("metadata") or "{}"),
        role=row.get("role"), created_at=created, updated_at=from_db_time(row.get("updated_at")),
        deleted_at=from_db_time(row.get("deleted_at")), expires_at=from_db_time(row.get("expires_at")),
        valid_at=from_db_time(row.get("valid_at")) or created,
        invalid_at=from_db_time(row.get("invalid_at")), mentions=list(row.get("mentions") or []),
        score=None if scores is None else scores["vector"], scores=dict(scores or {}),
        said_at=from_db_time(row.get("said_at")), turn=row.get("turn"),
        times=[TimeSpan.from_dict(t) for t in json.loads(row.get("times") or "[]")],
    )  # fmt: skip


def memory_context(scope: Scope, query: ContextQuery) -> Statement:
    return Statement(
        "memory_context",
        {
            "scope": scope.key,
            "embedding": vector(query.embedding),
            "ids": list(dict.fromkeys(query.ids)),
            "before": max(0, int(query.before)),
            "after": max(0, int(query.after)),
            "time_from": utc(query.time_from),
            "time_to": utc(query.time_to),
            "time_k": max(0, int(query.time_k)),
            "filters": context_filter_rows(query.filters),
            "narrow": dict(scope.narrowing),
            "as_of": utc(query.as_of),
            "now": utc(utcnow()),
        },
    )


def context_filter_rows(flt: Filter | None) -> list[dict[str, Any]]:
    """memory_context.cypher's $filters: metadata equalities ({key: "meta.<k>", value}); a filter that
    says more than equalities (graphmem.schema.filters.equalities) gets a row that matches nothing."""
    pairs = equalities(flt)
    if pairs is None:
        return [{"key": META_PREFIX, "value": None}]
    return [{"key": META_PREFIX + k, "value": v} for k, v in pairs]


def to_context(row: Mapping[str, Any]) -> MemoryContext:
    out = MemoryContext()
    for n in row["neighbours"]:  # a neighbour deleted while the statement read it: no memory (is_live)
        if is_live(n["memory"]):
            out.neighbours.append(Neighbour(n["of"], int(n["offset"]), to_memory(n["memory"], {"vector": float(n["vector"])})))
    for d in row["dated"]:
        if is_live(d["memory"]):
            out.dated.append(to_memory(d["memory"], {"vector": float(d["vector"])}))
    return out
