"""The fact texts of an add's extracted relations (graphmem.schema.facts), embedded in the add's one
embedding request with the entity names and memory facts."""

from __future__ import annotations

from graphmem.schema.facts import relation_fact
from graphmem.stages.graph_extraction import GraphExtraction

#: (source canonical, relationship, destination canonical) -> (fact text, its embedding)
RelationFacts = dict[tuple[str, str, str], tuple[str, list[float]]]


def relation_fact_texts(extracted: GraphExtraction, self_name: str) -> list[str]:
    """One fact per extracted relation, aligned with ``extracted.relations``: the names and types as
    this add extracted them, and the times the model stated (none when it stated none)."""
    out = []
    for rel in extracted.relations:
        src, dst = extracted.entities.get(rel.source), extracted.entities.get(rel.destination)
        out.append(relation_fact(
            src.name if src else rel.source, src.entity_type if src else None, rel.relationship,
            dst.name if dst else rel.destination, dst.entity_type if dst else None,
            valid_at=rel.valid_at, invalid_at=rel.invalid_at, self_name=self_name,
        ))  # fmt: skip
    return out
