"""The Neo4j store's statements: which cypher/ file runs with which parameters, and how rows read back.

Building a statement is kept apart from running it (see store.py), so the parameters can be tested
without a server. Cypher text only ever comes from a file; values only ever travel as parameters.
This module holds the graph's statements; memories.py and conversation.py hold the others.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from graphmem.errors import InvalidInputError
from graphmem.schema.filters import Filter, scoped
from graphmem.schema.ontology import property_names, stored_attributes
from graphmem.stores.base import EntityCandidate, GraphQuery, RelationFact
from graphmem.stores.neo4j.conversation import message_rows
from graphmem.stores.neo4j.filters import filtered
from graphmem.stores.neo4j.graph_rows import entity_rows, relation_rows
from graphmem.stores.neo4j.memories import memory_rows
from graphmem.stores.neo4j.schema_check import expected
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
from graphmem.types import Entity, GraphWrite, Relation, Scope, utcnow

#: Schema statements run by setup(), in order.
SCHEMA = (
    "schema_entity_scope_canonical_unique",
    "schema_entity_id_unique",
    "schema_entity_scope_index",
    "schema_entity_user_id_index",
    "schema_entity_agent_id_index",
    "schema_entity_run_id_index",
    "schema_entity_embedding_vector_index",
    "schema_memory_id_unique",
    "schema_memory_scope_index",
    "schema_memory_embedding_vector_index",
    "schema_text_fulltext",
    "schema_drop_entity_name_fulltext",
    "schema_drop_memory_text_fulltext",
    "schema_conversation_scope_unique",
    "schema_message_scope_index",
    "schema_scope_lock_unique",
    "schema_scope_version_unique",
    "schema_memory_expires_at_index",
    "schema_message_expires_at_index",
    "schema_import_key_unique",
    "schema_memory_turn_index",
    "schema_memory_time_index",
    "schema_drop_summary_scope_index",
    "schema_summary_scope_unique",
)

#: The vector indexes setup() checks for the store's dimension.
VECTOR_INDEXES = ("entity_embedding", "memory_embedding")
#: search_graph's $relation_pool for a query without one (GraphQuery.relation_pool None: every relation)
EVERY = 2**31 - 1

# --- statements -----------------------------------------------------------------------------------


def schema(dimensions: int) -> list[Statement]:
    return [Statement(name, {"dimensions": dimensions} if "vector" in name else {}) for name in SCHEMA]


def summaries_keep_newest() -> Statement:
    """Run before the schema statements when they are not current (schema_summary_scope_unique)."""
    return Statement("summaries_keep_newest")


def scope_lock(scope: Scope) -> Statement:
    return Statement("scope_lock", {"scope": scope.key})


def show_indexes() -> Statement:
    """The indexes setup() checks, by name: graphmem's schema, the ones it drops, its vector indexes.
    Named so that the read stays the same size however many scope partitions (partition.py: two
    vector indexes per large scope) the database holds; every process's setup pays it."""
    want = expected(SCHEMA)
    return Statement("show_indexes", {"names": sorted({*want.indexes, *want.dropped, *VECTOR_INDEXES})})


def ping() -> Statement:
    return Statement("ping")


def node_count() -> Statement:
    return Statement("node_count")


def await_indexes(timeout_seconds: int) -> Statement:
    return Statement("await_indexes", {"timeout_seconds": timeout_seconds})


def resolve(
    scope: Scope, candidates: list[EntityCandidate], threshold: float, embeddings: list[list[float]], top_k: int,
    entity_ids: list[str], mention_limit: int, plan: VectorPlan,
) -> Statement:
    """resolve.cypher: an add's matches, relations around them and memory candidates in one statement."""
    rows = [{"canonical": c.canonical, "embedding": vector(c.embedding), "mention": bool(c.mention)} for c in candidates]
    return filtered(
        "resolve",
        {
            "scope": scope.key,
            "candidates": rows,
            "threshold": float(threshold),
            "base_k": plan.match_k,
            "embeddings": [vector(e) for e in embeddings],
            "top_k": max(0, int(top_k)),
            "entity_ids": list(entity_ids),
            "mention_limit": max(0, int(mention_limit)),
            "scan_limit": plan.scan_limit,
            "max_k": plan.max_k,
            "now": utc(utcnow()),
        },
        scoped(scope, None, "memory"),
        "memory",
        also=((scoped(scope, None, "relation"), "relation"),),
    )


def relations_around(scope: Scope, entity_ids: list[str]) -> Statement:
    return filtered("relations_around", {"scope": scope.key, "ids": list(entity_ids)}, scoped(scope, None, "relation"), "relation")


def write_graph(write: GraphWrite, unlock: bool = False) -> Statement:
    """``unlock``: the statement runs in the transaction holding the scope's lock (scope_lock.cypher)."""
    canonical_of = {e.id: e.canonical for e in write.entities}
    return Statement(
        "write_graph",
        {
            "scope": write.scope.key,
            "ids": write.scope.full_key,
            "scope_ids": write.scope.properties(),
            "at": utc(write.at),
            "add_id": write.add_id,
            "invalidations": [{"id": i.relation_id, "invalid_at": utc(i.invalid_at)} for i in write.invalidations],
            "entities": entity_rows(write),
            "relations": relation_rows(write, canonical_of),
            "memories": memory_rows(write, canonical_of),
            "messages": message_rows(write),
            "keep_messages": int(write.keep_messages),
            "idempotency_key": write.idempotency_key,
            "idempotency_outcome": write.idempotency_outcome,
            "unlock": unlock,
        },
    )


def set_entity_attributes(write: GraphWrite) -> Statement | None:
    """The add's ontology attribute values (None when it has none); runs in the add's transaction."""
    rows = [{"canonical": e.canonical, "attrs": property_names(e.attributes)} for e in write.entities if e.attributes]
    return Statement("set_entity_attributes", {"scope": write.scope.key, "entities": rows}) if rows else None


def search_graph(
    scope: Scope, query: GraphQuery, plan: VectorPlan, relation_limit: int, now: datetime | None = None
) -> Statement:
    terms = fulltext_terms(query.text or "", names=True)
    known_at = utc(query.known_at)
    return filtered(
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
            "fulltext_limit": int(query.top_k) * plan.fulltext_k + 10,
            "seed_canonicals": list(query.seed_canonicals),
            "known_at": known_at,
            # relation_visible's event time: as_of, else known_at, else now (ours, not the server's)
            "event_time": utc(query.as_of) or known_at or utc(now or utcnow()),
            "include_invalidated": bool(query.include_invalidated),
            "relation_limit": relation_limit,
            "hops": int(query.hops),
            "hop_decay": float(query.hop_decay),
            "fact_k": max(0, int(query.fact_top_k)),
            # pooled: the seeds' relations are read from the scope's fact scan (a query vector is needed)
            "pooled": query.relation_pool is not None and bool(query.embedding),
            "relation_pool": EVERY if query.relation_pool is None else max(0, int(query.relation_pool)),
            "fact_terms": [str(t).lower() for t in query.fact_terms],
            **fact_scoring(query),
        },
        scoped(scope, query.filters, "relation"),
        "relation",
    )


def fact_scoring(query: GraphQuery) -> dict[str, object]:
    """$fact_embedding, $fact_norm, $fact_shift: a fact's score is its unit vector .
    query.fact_embedding + fact_shift, which Cypher reads as norm * cosine + shift (its cosine
    normalises both vectors); without a correction, the plain cosine with the query embedding."""
    if not query.embedding:
        return {"fact_embedding": None, "fact_norm": 1.0, "fact_shift": 0.0}
    if query.fact_embedding is None:
        return {"fact_embedding": vector(query.embedding), "fact_norm": 1.0, "fact_shift": 0.0}
    if len(query.fact_embedding) != len(query.embedding):
        raise InvalidInputError(f"fact_embedding has {len(query.fact_embedding)} dimensions, the query embedding {len(query.embedding)}")
    norm = math.sqrt(sum(float(x) * float(x) for x in query.fact_embedding))
    return {"fact_embedding": vector(query.fact_embedding), "fact_norm": norm, "fact_shift": float(query.fact_shift)}


def get_all(
    scope: Scope, include_invalidated: bool, limit: int | None, now: datetime | None = None, flt: Filter | None = None
) -> Statement:
    return filtered(
        "get_all",
        {
            "scope": scope.key,
            "include_invalidated": bool(include_invalidated),
            "now": utc(now or utcnow()),
            "limit": limit_value(limit),
        },
        scoped(scope, flt, "relation"),
        "relation",
    )


def set_relation_facts(scope: Scope, facts: list[RelationFact]) -> Statement:
    rows = [{"id": f.relation_id, "source_id": f.source_id, "fact": f.fact, "embedding": vector(f.embedding)} for f in facts]
    return Statement("set_relation_facts", {"scope": scope.key, "facts": rows})


def scopes() -> Statement:
    return Statement("scopes")


def timeline(scope: Scope, canonical: str) -> Statement:
    return filtered("timeline", {"scope": scope.key, "canonical": canonical}, scoped(scope, None, "relation"), "relation")


def entities(scope: Scope) -> Statement:
    return Statement("entities", {"scope": scope.key})


def delete_all(scope: Scope) -> Statement:
    """Everything of the partition; for a scope naming ids beyond its owner (a user's run), only the
    memories and relations written with those ids (delete_scoped.cypher)."""
    if not scope.narrowing:
        return Statement("delete_all", {"scope": scope.key})
    return filtered(
        "delete_scoped", {"scope": scope.key}, scoped(scope, None, "memory"), "memory", also=((scoped(scope, None, "relation"), "relation"),)
    )


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
        attributes=_attributes(row.get("attrs")),
    )


def _attributes(pairs: Any) -> dict[str, Any]:
    """``[[attr_<name>, value], ...]`` as read by the statements -> {name: value}."""
    return stored_attributes(dict(pairs or []))


def is_live_relation(record: Mapping[str, Any]) -> bool:
    """A relation row read from a relationship and nodes that still exist: one another transaction
    deleted while the statement read it comes back with null properties (memories.is_live)."""
    rel = record.get("rel")
    return (rel is not None and rel.get("id") is not None and record.get("relationship") is not None
            and record.get("source") is not None and record.get("destination") is not None)


def to_relations(records: Iterable[Mapping[str, Any]]) -> list[Relation]:
    return [to_relation(record) for record in records if is_live_relation(record)]


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
        fact=rel.get("fact"),
        retired_by=rel.get("retired_by"),
    )
    if "source_type" in record.keys():
        relation.source_type, relation.destination_type = record["source_type"], record["destination_type"]
        relation.source_attributes = _attributes(record["source_attrs"])
        relation.destination_attributes = _attributes(record["destination_attrs"])
    if "hops" in record.keys() and record["hops"] > 1:
        relation.hops, relation.path = int(record["hops"]), [dict(step) for step in record["path"]]
    if "vector" in record.keys():
        relation.scores = {
            "vector": float(record["vector"]),  # the relation's own fact cosine
            "fulltext": float(record["fulltext"]),
            "seed": float(record["seed"]),  # entity proximity
        }
    return relation
