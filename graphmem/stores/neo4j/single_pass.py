"""The single-pass add's context read (cypher/single_pass_context.cypher): statement and rows."""

from __future__ import annotations

from typing import Any

from graphmem.schema.filters import scoped
from graphmem.stores.base import AddContext, AddContextQuery
from graphmem.stores.neo4j import memories as memory_queries
from graphmem.stores.neo4j import queries
from graphmem.stores.neo4j.filters import filtered
from graphmem.stores.neo4j.values import Statement, VectorPlan, fulltext_terms, lucene_escape, utc, vector
from graphmem.types import Scope, utcnow


def context_statement(scope: Scope, query: AddContextQuery, plan: VectorPlan) -> Statement:
    top_k = max(0, int(query.entity_k))
    return filtered(
        "single_pass_context",
        {
            "scope": scope.key,
            "self_canonical": query.self_canonical,
            "embedding": vector(query.embedding),
            "threshold": float(query.threshold),
            "top_k": top_k,
            "scan_limit": plan.scan_limit,
            "max_k": plan.max_k,
            "fulltext_terms": fulltext_terms(query.text or "", names=True),
            "fulltext_scope": lucene_escape(scope.key),
            # a few extra hits make up for the rare entity of another scope passing the token filter
            "fulltext_limit": top_k * plan.fulltext_k + 10,
            "relation_limit": max(0, int(query.relation_limit)),
            "similar_k": max(0, int(query.similar_k)),
            "mention_limit": max(0, int(query.mention_limit)),
            "now": utc(utcnow()),
        },
        scoped(scope, None, "memory"),
        "memory",
        also=((scoped(scope, None, "relation"), "relation"),),
    )


def to_context(row: Any) -> AddContext:
    return AddContext(
        queries.to_relations(row["relations"]),
        [memory_queries.to_memory(hit["memory"], {"vector": float(hit["cosine"])})
         for hit in row["similar"] if memory_queries.is_live(hit["memory"])],
        memory_queries.to_memories(row["mentioning"]),
    )
