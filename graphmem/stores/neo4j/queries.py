"""The Neo4j store's statements: which cypher/ file runs with which parameters, and how rows read back.

Building a statement is kept apart from running it (see store.py), so the parameters can be tested
without a server. Cypher text only ever comes from a file; values only ever travel as parameters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from graphmem.resources import load_cypher
from graphmem.stores.base import EntityCandidate, GraphQuery
from graphmem.types import Entity, GraphWrite, Relation, Scope, new_id

#: Schema statements run by setup(), in order.
SCHEMA = (
    "schema_entity_scope_canonical_unique",
    "schema_entity_id_unique",
    "schema_entity_scope_index",
    "schema_entity_user_id_index",
    "schema_entity_agent_id_index",
    "schema_entity_run_id_index",
    "schema_entity_embedding_vector_index",
    "schema_entity_name_fulltext",
)

#: LIMIT value standing for "no limit" (Cypher's LIMIT does not take null).
NO_LIMIT = 2**62

_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')
_MAX_FULLTEXT_TERMS = 64


@dataclass(frozen=True)
class Statement:
    """One Cypher file and the parameters to run it with."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return load_cypher(self.name)


@dataclass(frozen=True)
class VectorPlan:
    """How scoped vector search uses the global index (see match_entities.cypher)."""

    scan_limit: int = 2000  # scopes up to this many entities are scanned exactly
    max_k: int = 4000  # cap on the oversampled k asked from the vector index
    match_k: int = 10  # neighbours wanted per candidate before oversampling (match_entities)


# --- values in and out --------------------------------------------------------------------------


def utc(value: datetime | None) -> datetime | None:
    """An aware UTC datetime: a naive one would become a LocalDateTime, which never compares."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def from_db_time(value: Any) -> datetime | None:
    if value is None:
        return None
    native = value.to_native() if hasattr(value, "to_native") else value
    return utc(native)


def vector(values: Sequence[float]) -> list[float]:
    return [float(v) for v in values]


def lucene_escape(text: str) -> str:
    """Backslash-escape Lucene's query syntax. Lower case, so AND / OR / NOT stay plain words."""
    return _LUCENE_SPECIAL.sub(r"\\\1", text.lower())


def fulltext_terms(text: str) -> str | None:
    """The query text as escaped Lucene terms, or None when it holds no letter or digit."""
    words = [word for word in text.split() if any(ch.isalnum() for ch in word)]
    if not words:
        return None
    return lucene_escape(" ".join(words[:_MAX_FULLTEXT_TERMS]))


# --- statements -----------------------------------------------------------------------------------


def schema(dimensions: int) -> list[Statement]:
    return [Statement(name, {"dimensions": dimensions} if "vector" in name else {}) for name in SCHEMA]


def show_entity_embedding_index() -> Statement:
    return Statement("show_entity_embedding_index")


def await_indexes(timeout_seconds: int) -> Statement:
    return Statement("await_indexes", {"timeout_seconds": timeout_seconds})


def match_entities(scope: Scope, candidates: list[EntityCandidate], threshold: float, plan: VectorPlan) -> Statement:
    rows = [{"canonical": c.canonical, "embedding": vector(c.embedding)} for c in candidates]
    return Statement(
        "match_entities",
        {
            "scope": scope.key,
            "candidates": rows,
            "threshold": float(threshold),
            "scan_limit": plan.scan_limit,
            "base_k": plan.match_k,
            "max_k": plan.max_k,
        },
    )


def relations_around(scope: Scope, entity_ids: list[str]) -> Statement:
    return Statement("relations_around", {"scope": scope.key, "ids": list(entity_ids)})


def write_graph(write: GraphWrite) -> Statement:
    canonical_of = {e.id: e.canonical for e in write.entities}
    return Statement(
        "write_graph",
        {
            "scope": write.scope.key,
            "scope_ids": write.scope.properties(),
            "at": utc(write.at),
            "add_id": write.add_id,
            "invalidations": [{"id": i.relation_id, "invalid_at": utc(i.invalid_at)} for i in write.invalidations],
            "entities": [
                {
                    "id": e.id,
                    "name": e.name,
                    "canonical": e.canonical,
                    "entity_type": e.entity_type,
                    "embedding": vector(e.embedding),
                    "is_new": bool(e.is_new),
                    "seq": seq,
                }
                for seq, e in enumerate(write.entities)
            ],
            "relations": [
                {
                    "id": new_id(),
                    "type": r.relationship,
                    "source_id": r.source_id,
                    "source_canonical": canonical_of.get(r.source_id),
                    "destination_id": r.destination_id,
                    "destination_canonical": canonical_of.get(r.destination_id),
                    "valid_at": utc(r.valid_at),
                    "invalid_at": utc(r.invalid_at),
                    "seq": seq,
                }
                for seq, r in enumerate(write.relations)
            ],
        },
    )


def search_graph(scope: Scope, query: GraphQuery, plan: VectorPlan, relation_limit: int) -> Statement:
    terms = fulltext_terms(query.text or "")
    return Statement(
        "search_graph",
        {
            "scope": scope.key,
            "embedding": vector(query.embedding) if query.embedding else None,
            "threshold": float(query.threshold),
            "top_k": int(query.top_k),
            "scan_limit": plan.scan_limit,
            "max_k": plan.max_k,
            "fulltext_terms": terms,
            "fulltext_scope": lucene_escape(scope.key),
            # a few extra hits make up for the rare entity of another scope passing the token filter
            "fulltext_limit": int(query.top_k) * 4 + 10,
            "seed_canonicals": list(query.seed_canonicals),
            "as_of": utc(query.as_of),
            "include_invalidated": bool(query.include_invalidated),
            "relation_limit": relation_limit,
        },
    )


def get_all(scope: Scope, include_invalidated: bool, limit: int | None) -> Statement:
    return Statement(
        "get_all",
        {
            "scope": scope.key,
            "include_invalidated": bool(include_invalidated),
            "limit": NO_LIMIT if limit is None else max(0, int(limit)),
        },
    )


def entities(scope: Scope) -> Statement:
    return Statement("entities", {"scope": scope.key})


def delete_all(scope: Scope) -> Statement:
    return Statement("delete_all", {"scope": scope.key})


def reset() -> Statement:
    return Statement("reset")


# --- rows -----------------------------------------------------------------------------------------


def to_entity(row: Mapping[str, Any], score: float | None = None) -> Entity:
    return Entity(
        id=row["id"],
        name=row["name"],
        canonical=row["canonical"],
        entity_type=row.get("entity_type") or "",
        mentions=int(row.get("mentions") or 0),
        created_at=from_db_time(row.get("created_at")),
        updated_at=from_db_time(row.get("updated_at")),
        score=score,
    )


def to_relation(record: Mapping[str, Any]) -> Relation:
    rel = record["rel"]
    relation = Relation(
        id=rel["id"],
        source_id=record["source_id"],
        source=record["source"],
        relationship=record["relationship"],
        destination_id=record["destination_id"],
        destination=record["destination"],
        valid_at=from_db_time(rel.get("valid_at")),
        invalid_at=from_db_time(rel.get("invalid_at")),
        created_at=from_db_time(rel.get("created_at")),
        expired_at=from_db_time(rel.get("expired_at")),
        mentions=int(rel.get("mentions") or 0),
        provenance=list(rel.get("provenance") or []),
    )
    if "vector" in record.keys():
        relation.scores = {
            "vector": float(record["vector"]),
            "fulltext": float(record["fulltext"]),
            "seed": float(record["seed"]),
        }
    return relation
