"""The fact texts of an add's extracted relations (graphmem.schema.facts), embedded in the add's one
embedding request with the entity names and memory facts."""

from __future__ import annotations

from graphmem.schema.facts import fact_meaning, relation_fact
from graphmem.stages.graph_extraction import GraphExtraction

#: (source canonical, relationship, destination canonical) -> (fact text, its embedding)
RelationFacts = dict[tuple[str, str, str], tuple[str, list[float]]]


def relation_fact_texts(extracted: GraphExtraction, self_name: str) -> list[tuple[str, str]]:
    """One (fact, text to embed) per extracted relation, aligned with ``extracted.relations``: the
    names and types as this add extracted them, and the times the model stated (none when it stated
    none); the second is ``fact_meaning``'s wording of the same relation."""
    out = []
    for rel in extracted.relations:
        src, dst = extracted.entities.get(rel.source), extracted.entities.get(rel.destination)
        args = (src.name if src else rel.source, src.entity_type if src else None, rel.relationship,
                dst.name if dst else rel.destination, dst.entity_type if dst else None)
        out.append((relation_fact(*args, valid_at=rel.valid_at, invalid_at=rel.invalid_at, self_name=self_name),
                    fact_meaning(*args, valid_at=rel.valid_at, invalid_at=rel.invalid_at, self_name=self_name)))
    return out
