"""One ``add``: messages in, one atomic GraphWrite out.

Phases, each with a fixed number of calls whatever the number of triples:
1. extract   graph extraction stage (1 LLM request; a 2nd only if the model skipped relations)
2. embed     one batched embedding call for every extracted entity name
3. resolve   match_entities (1 round trip) + relations_around the matched nodes (1 round trip)
4. decide    invalidation stage, only when current relations exist around the matched nodes
5. write     one transaction (store.write)
Nothing is written before phase 5, so a failure anywhere leaves the store untouched.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime

from graphmem.embeddings.base import Embedder
from graphmem.stages.conversation import Message
from graphmem.stages.graph_extraction import ExtractedRelation, GraphExtraction, GraphExtractionStage
from graphmem.stages.invalidation import InvalidationStage
from graphmem.stores.base import EntityCandidate, GraphStore
from graphmem.types import (
    Entity,
    EntityWrite,
    GraphWrite,
    Invalidation,
    Relation,
    RelationWrite,
    Scope,
    iso,
    new_id,
    utcnow,
)

log = logging.getLogger(__name__)


@dataclass
class AddOutcome:
    add_id: str
    write: GraphWrite | None = None
    names: dict[str, str] = field(default_factory=dict)  # entity id -> name
    retired: list[Relation] = field(default_factory=list)
    dropped: int = 0  # unusable items from the model

    def relations(self) -> list[dict]:
        """What the add did to the graph, for the caller."""
        out: list[dict] = []
        if self.write is None:
            return out
        for rel in self.write.relations:
            out.append(
                {
                    "source": self.names.get(rel.source_id, rel.source_id),
                    "relationship": rel.relationship,
                    "destination": self.names.get(rel.destination_id, rel.destination_id),
                    "valid_at": iso(rel.valid_at),
                    "invalid_at": iso(rel.invalid_at),
                    "event": "ADD",
                }
            )
        invalid_by_id = {inv.relation_id: inv.invalid_at for inv in self.write.invalidations}
        for rel in self.retired:
            out.append(
                {
                    "source": rel.source,
                    "relationship": rel.relationship,
                    "destination": rel.destination,
                    "valid_at": iso(rel.valid_at),
                    "invalid_at": iso(invalid_by_id.get(rel.id)),
                    "event": "INVALIDATE",
                }
            )
        return out


class AddPipeline:
    def __init__(
        self,
        store: GraphStore,
        embedder: Embedder,
        extraction: GraphExtractionStage,
        invalidation: InvalidationStage,
        threshold: float = 0.7,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.extraction = extraction
        self.invalidation = invalidation
        self.threshold = threshold

    def run(self, scope: Scope, messages: list[Message], reference_time: datetime) -> AddOutcome:
        outcome = AddOutcome(add_id=new_id())
        extracted = self.extraction.run(messages, scope.self_name, reference_time)
        outcome.dropped += extracted.dropped
        if not extracted.entities:
            return outcome
        entities = self._resolve(scope, extracted)
        outcome.names = {e.id: e.name for e in entities.values()}
        new_relations = [r for r in extracted.relations if entities[r.source].id != entities[r.destination].id]
        existing = self._existing_relations(scope, entities)
        if existing:
            outcome.retired, dropped = self.invalidation.run(
                messages, existing, new_relations, {k: e.name for k, e in entities.items()}, scope.self_name, reference_time
            )
            outcome.dropped += dropped
        outcome.write = self._plan(outcome.add_id, scope, entities, new_relations, outcome.retired, reference_time)
        if not outcome.write.is_empty():
            self.store.write(outcome.write)
        return outcome

    def _resolve(self, scope: Scope, extracted: GraphExtraction) -> dict[str, EntityWrite]:
        """Map every extracted canonical name to an existing entity of the scope or a new one."""
        keys = list(extracted.entities)
        vectors = self.embedder.embed([extracted.entities[k].name for k in keys])
        candidates = [EntityCandidate(canonical=k, embedding=v) for k, v in zip(keys, vectors)]
        matches = self.store.match_entities(scope, candidates, self.threshold)
        resolved: dict[str, EntityWrite] = {}
        for key, vector, match in zip(keys, vectors, matches):
            found: Entity | None = match
            item = extracted.entities[key]
            if found is not None:
                resolved[key] = EntityWrite(found.id, found.name, found.canonical, found.entity_type, vector, is_new=False)
            else:
                resolved[key] = EntityWrite(new_id(), item.name, key, item.entity_type, vector, is_new=True)
        return resolved

    def _existing_relations(self, scope: Scope, entities: dict[str, EntityWrite]) -> list[Relation]:
        known = sorted({e.id for e in entities.values() if not e.is_new})
        return self.store.relations_around(scope, known) if known else []

    @staticmethod
    def _plan(
        add_id: str,
        scope: Scope,
        entities: dict[str, EntityWrite],
        relations: list[ExtractedRelation],
        retired: list[Relation],
        reference_time: datetime,
    ) -> GraphWrite:
        write = GraphWrite(add_id=add_id, scope=scope, at=utcnow())
        seen: set[str] = set()
        for entity in entities.values():
            if entity.id not in seen:  # two names resolving to one node touch it once
                seen.add(entity.id)
                write.entities.append(entity)
        planned: set[tuple[str, str, str]] = set()
        for rel in relations:
            ids = (entities[rel.source].id, rel.relationship, entities[rel.destination].id)
            if ids in planned:
                continue
            planned.add(ids)
            write.relations.append(
                RelationWrite(ids[0], rel.relationship, ids[2], valid_at=rel.valid_at or reference_time, invalid_at=rel.invalid_at)
            )
        for old in retired:
            write.invalidations.append(Invalidation(old.id, _retired_at(old, write.relations, reference_time)))
        return write


def _retired_at(old: Relation, new: list[RelationWrite], reference_time: datetime) -> datetime:
    """When a retired relation stopped being true: when its replacement started, else the reference time."""
    for rel in new:
        if rel.source_id == old.source_id and rel.relationship == old.relationship:
            return rel.valid_at
    return reference_time
