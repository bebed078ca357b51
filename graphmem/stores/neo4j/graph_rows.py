"""write_graph.cypher's entity and relation parameters (memories.py and conversation.py build the
memory and message ones): one row per item of the add, in the add's order (``seq``)."""

from __future__ import annotations

from typing import Any

from graphmem.schema.labels import type_label
from graphmem.stores.neo4j.values import utc, vector
from graphmem.types import GraphWrite


def entity_rows(write: GraphWrite) -> list[dict[str, Any]]:
    """write_graph.cypher's entities: each with its label and its place in the add (``seq``)."""
    return [
        {
            "id": e.id,
            "name": e.name,
            "canonical": e.canonical,
            "entity_type": e.entity_type,
            # a label of the style's fixed list or a declared ontology type name (validated), or null
            "label": e.label or type_label(e.entity_type),
            "embedding": vector(e.embedding),
            "is_new": bool(e.is_new),
            "seq": seq,
        }
        for seq, e in enumerate(write.entities)
    ]


def relation_rows(write: GraphWrite, canonical_of: dict[str, str]) -> list[dict[str, Any]]:
    """write_graph.cypher's relations: each with its endpoints' canonical names and its place in the add."""
    return [
        {
            "id": r.id,
            "type": r.relationship,
            "source_id": r.source_id,
            "source_canonical": canonical_of.get(r.source_id),
            "destination_id": r.destination_id,
            "destination_canonical": canonical_of.get(r.destination_id),
            "valid_at": utc(r.valid_at),
            "invalid_at": utc(r.invalid_at),
            "created_at": utc(r.created_at),
            "expired_at": utc(r.expired_at),
            "seq": seq,
            # both or neither: a fact without its embedding is not written
            "fact": r.fact if r.fact_embedding is not None else None,
            "fact_embedding": vector(r.fact_embedding) if r.fact is not None and r.fact_embedding is not None else None,
            "provenance": list(r.provenance) or None,
            "retired_by": r.retired_by,
        }
        for seq, r in enumerate(write.relations)
    ]
