"""One ``add``: messages in, one atomic GraphWrite out.

Phases, each a fixed number of calls whatever the number of triples or facts:
1. extract   graph extraction and fact extraction, concurrently (2 LLM requests; a 3rd only if the
             model skipped the relations tool)
2. embed     one batched embedding call for every extracted entity name, fact and relation fact
3. resolve   one round trip (store.resolve): the entities' matches, the current relations around
             the matched nodes, and the memory candidates of step 5 as far as they are known
             before invalidation (skipped when there is nothing to ask)
4. invalidate  the invalidation stage, only when current relations exist around the matched nodes
5. reconcile the memory candidates (read in step 3; read again, one round trip, only when the
             retired relations add entities): the memories similar to
             the facts AND the live memories that MENTION the entities of this add's relations and
             of the relations it retires (the scope's own node aside: nearly every memory is about
             the user). Memories stating a retired relation are shown to the memory-update stage
             marked no longer true, so memory facts follow the graph (graph-guided consolidation).
             The update stage runs only when there are candidates.
6. write     one transaction (store.write) for graph and memories
Nothing is written before phase 5, so a failure anywhere leaves the store untouched.
"""

from __future__ import annotations

import logging
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from functools import partial
from typing import Any

from graphmem.embeddings.base import Embedder
from graphmem.ingest import overlap
from graphmem.ingest.context import render_context
from graphmem.ingest.relation_facts import RelationFacts, relation_fact_texts
from graphmem.llm.usage import record_embedding
from graphmem.stages.conversation import Message
from graphmem.stages.facts import FactExtractionStage
from graphmem.stages.graph_extraction import (
    ExtractedRelation,
    GraphExtraction,
    GraphExtractionStage,
)
from graphmem.stages.invalidation import InvalidationStage
from graphmem.stages.memory_update import Decision, MemoryUpdateStage
from graphmem.stores.base import EntityCandidate, GraphStore, Resolution
from graphmem.types import (
    Conversation,
    EntityWrite,
    GraphWrite,
    Invalidation,
    LoggedMessage,
    MemoryItem,
    MemoryWrite,
    Relation,
    RelationWrite,
    Scope,
    canonical_name,
    iso,
    new_id,
    utcnow,
)

log = logging.getLogger(__name__)

#: how many similar existing memories the update stage sees per new fact
SIMILAR_MEMORIES = 5
#: at most this many memories found through the entities they mention (newest first)
MENTIONING_MEMORIES = 20


@dataclass
class AddOutcome:
    add_id: str
    write: GraphWrite | None = None
    names: dict[str, str] = field(default_factory=dict)  # entity id -> name
    retired: list[Relation] = field(default_factory=list)
    previous: dict[str, str] = field(default_factory=dict)  # memory id -> text before this add
    #: unusable or over-the-limit items from the model, by kind: entities, relations, facts,
    #: memory (update decisions), invalidations, calls (tool calls that were not valid at all),
    #: attributes (ontology attribute values)
    dropped: Counter[str] = field(default_factory=Counter)
    off_ontology: int = 0  # of those: what the ontology refused (types, relations, attribute values)
    drop_reasons: list[str] = field(default_factory=list)  # which dropped item and why, where known
    conversation: Conversation = field(default_factory=Conversation)  # the log as it was before this add
    #: the current relations the add read, by (source id, type, destination id): a written relation
    #: that matches one bumps it (the store's rule), so add() reports its id, created_at and mentions
    current: dict[tuple[str, str, str], Relation] = field(default_factory=dict)
    #: the fact text and embedding of each extracted relation, by its canonical triple
    relation_facts: RelationFacts = field(default_factory=dict)

    def dropped_counts(self) -> dict[str, int]:
        """The non-zero drop counts, by kind (``add``'s result carries them as ``dropped``)."""
        return {kind: n for kind, n in sorted(self.dropped.items()) if n}

    def results(self) -> list[dict[str, Any]]:
        """mem0's add result: one entry per memory event."""
        if self.write is None:
            return []
        out = []
        for mem in self.write.memories:
            entry: dict[str, Any] = {"id": mem.id, "memory": mem.text or self.previous.get(mem.id, ""), "event": mem.event}
            if mem.event == "UPDATE":
                entry["previous_memory"] = self.previous.get(mem.id)
            out.append(entry)
        return out

    def relations(self) -> list[dict[str, Any]]:
        """What the add did to the graph, each relation with the fields a read returns (id,
        created_at, expired_at, mentions) plus ``event``; no read after the write: a new instance has
        the id the write chose, a bumped one is the current instance the add read."""
        if self.write is None:
            return []
        out = [self._added(rel, self.current.get((rel.source_id, rel.relationship, rel.destination_id)))
               for rel in self.write.relations]
        invalid_by_id = {inv.relation_id: inv.invalid_at for inv in self.write.invalidations}
        for rel in self.retired:
            row = dict(rel.to_dict())
            row.update(invalid_at=iso(invalid_by_id.get(rel.id)), expired_at=iso(self.write.at), event="INVALIDATE")
            if rel.id in invalid_by_id:  # what the write records (the store sets retired_by), as a read shows it after
                row["provenance"] = {"added_by": list(rel.provenance), "retired_by": self.write.add_id}
            out.append(row)
        return out

    def _added(self, rel: RelationWrite, bumped: Relation | None) -> dict[str, Any]:
        assert self.write is not None
        row: dict[str, Any] = {
            "id": rel.id, "source": self.names.get(rel.source_id, rel.source_id), "relationship": rel.relationship,
            "destination": self.names.get(rel.destination_id, rel.destination_id), "valid_at": iso(rel.valid_at),
            "invalid_at": iso(rel.invalid_at), "created_at": iso(self.write.at), "expired_at": None, "mentions": 1,
        }
        if bumped is not None:
            row.update(id=bumped.id, valid_at=iso(bumped.valid_at), invalid_at=iso(bumped.invalid_at),
                       created_at=iso(bumped.created_at), mentions=bumped.mentions + 1)
        fact = bumped.fact if bumped is not None and bumped.fact is not None else rel.fact
        if fact is not None:
            row["fact"] = fact
        # the store's rule: a bumped version gains this add's id once, a new one starts with it
        added_by = [*bumped.provenance] if bumped is not None else []
        row["provenance"] = {"added_by": added_by + ([self.write.add_id] if self.write.add_id not in added_by else []),
                             "retired_by": None}
        row["event"] = "ADD"
        return row


class AddPipeline:
    def __init__(
        self,
        store: GraphStore,
        embedder: Embedder,
        extraction: GraphExtractionStage,
        invalidation: InvalidationStage,
        facts: FactExtractionStage,
        memory_update: MemoryUpdateStage,
        threshold: float = 0.7,
        recent_messages: int = 10,
        similar_threshold: float = 0.5,
        read_log: bool = True,
        keep_messages: int = 200,
    ) -> None:
        self.store = store
        self.embedder = embedder
        self.extraction = extraction
        self.invalidation = invalidation
        self.facts = facts
        self.memory_update = memory_update
        self.threshold = threshold
        self.recent_messages = recent_messages
        self.similar_threshold = similar_threshold
        self.read_log = read_log
        self.keep_messages = keep_messages
        # shared by every add in flight (AsyncMemory and servers run many at once): 2 per add would queue them
        self._pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="graphmem-add")

    def close(self) -> None:
        self._pool.shutdown(wait=True)

    def plan(
        self,
        scope: Scope,
        messages: list[Message],
        reference_time: datetime,
        metadata: dict[str, Any],
        prompt: str | None = None,
        graph_only: bool = False,
        conversation: Conversation | None = None,
    ) -> AddOutcome:
        """Everything up to the write: the GraphWrite to apply (nothing is written here).
        ``conversation``: the scope's log when the caller read it already (``log_limit``)."""
        outcome = AddOutcome(add_id=new_id())
        if conversation is not None:
            outcome.conversation = conversation
        elif self.read_log:
            outcome.conversation = self.store.conversation(scope, self.recent_messages)
        context = render_context(outcome.conversation)
        extracted, facts = self._extract(outcome, scope, messages, reference_time, context, prompt, graph_only)
        entity_vectors, fact_vectors = self._embed_add(outcome, scope, extracted, facts)
        found = self._read(scope, extracted, entity_vectors, fact_vectors)
        entities = self._resolve(extracted, entity_vectors, found)
        outcome.names = {e.id: e.name for e in entities.values()}
        new_relations = [r for r in extracted.relations if entities[r.source].id != entities[r.destination].id]
        existing = found.relations

        def inputs(retired: list[Relation]) -> tuple[list[MemoryItem], dict[str, list[Relation]]]:
            return self._candidates(scope, fact_vectors, entities, new_relations, retired, found)

        def decide(shown: tuple[list[MemoryItem], dict[str, list[Relation]]]) -> tuple[list[Decision], int]:
            return self._decide_memories(facts, *shown, reference_time, scope.self_name)

        if existing:  # the invalidation beside the memory update of its likeliest outcomes (overlap.py)
            names = {k: e.name for k, e in entities.items()}
            retire = partial(self.invalidation.run, messages, existing, new_relations, names, scope.self_name, reference_time, context)
            guess = overlap.likely_retired(existing, new_relations, entities, canonical_name(scope.self_name)) if facts else []
            outcome.retired, dropped, (decisions, dropped_memory) = overlap.retire_and_decide(self._pool, retire, guess, inputs, decide)
            outcome.dropped["invalidations"] += dropped
        else:
            decisions, dropped_memory = decide(inputs([]))
        outcome.dropped["memory"] += dropped_memory
        self._assemble(outcome, scope, messages, entities, new_relations, existing, decisions,
                       dict(zip(facts, fact_vectors, strict=False)), metadata, reference_time)
        return outcome

    def _extract(
        self, outcome: AddOutcome, scope: Scope, messages: list[Message], reference_time: datetime, context: str,
        prompt: str | None, graph_only: bool,
    ) -> tuple[GraphExtraction, list[str]]:
        """The add's two reads of the messages at once: entities and relations, and memory facts
        (none for a graph-only add); what each dropped is counted on ``outcome``."""
        # the add's usage meter (a context variable) goes with the extraction into the worker thread
        graph_job = overlap.submit(self._pool, self.extraction.run, messages, scope.self_name, reference_time, context)
        facts, dropped = ([], 0) if graph_only else self.facts.run(messages, scope.self_name, reference_time, context, prompt)
        extracted: GraphExtraction = graph_job.result()
        outcome.dropped["facts"] += dropped
        outcome.dropped.update(extracted.dropped)
        outcome.drop_reasons += extracted.reasons
        outcome.off_ontology = extracted.off_ontology
        return extracted, facts

    def _assemble(
        self,
        outcome: AddOutcome,
        scope: Scope,
        messages: list[Message],
        entities: dict[str, EntityWrite],
        new_relations: list[ExtractedRelation],
        existing: list[Relation],
        decisions: list[Decision],
        fact_vector: dict[str, list[float]],
        metadata: dict[str, Any],
        reference_time: datetime,
    ) -> None:
        """The add's GraphWrite from what was decided (both add modes): entities, relations, the
        retirements in ``outcome.retired`` (late facts closed, not retiring), memories and the log.
        ``existing``: the current relations the add read (what its result reports of a reasserted one)."""
        _log_dropped(outcome)
        write = GraphWrite(add_id=outcome.add_id, scope=scope, at=utcnow())
        _plan_graph(write, entities, new_relations, outcome.retired, reference_time, outcome.relation_facts)
        retired_ids = {r.id for r in outcome.retired}
        outcome.current = {(r.source_id, r.relationship, r.destination_id): r for r in existing if r.id not in retired_ids}
        # texts the update stage wrote itself (merged memories): one more embedding batch, not one per text
        merged = list(dict.fromkeys(d.text for d in decisions if d.event != "DELETE" and d.text not in fact_vector))
        fact_vector.update(zip(merged, self._embed(merged), strict=False))
        for decision in decisions:
            write.memories.append(self._memory_write(decision, fact_vector, entities, metadata, reference_time))
            if decision.memory is not None:
                outcome.previous[decision.memory.id] = decision.memory.text
        write.messages = log_messages(messages, reference_time)
        write.keep_messages = self.keep_messages
        outcome.write = write

    def _embed_add(
        self, outcome: AddOutcome, scope: Scope, extracted: GraphExtraction, facts: list[str]
    ) -> tuple[list[list[float]], list[list[float]]]:
        """The add's one embedding request: entity names, memory facts and relation facts (kept in
        ``outcome.relation_facts`` for the write); returns the entity and memory-fact vectors."""
        keys = list(extracted.entities)
        texts = relation_fact_texts(extracted, scope.self_name)
        vectors = self._embed([extracted.entities[k].name for k in keys] + facts + [meaning for _, meaning in texts])
        cut = len(keys) + len(facts)
        outcome.relation_facts = {r.key: (t[0], v) for r, t, v in zip(extracted.relations, texts, vectors[cut:], strict=True)}
        return vectors[: len(keys)], vectors[len(keys) : cut]

    def _embed(self, texts: list[str]) -> list[list[float]]:
        """One embedding request, counted in the add's usage (an empty batch sends none)."""
        if texts:
            record_embedding()
        return self.embedder.embed(texts)

    @property
    def log_limit(self) -> int | None:
        """How many logged messages an add reads (None: it reads no log)."""
        return self.recent_messages if self.read_log else None

    def _read(
        self, scope: Scope, extracted: GraphExtraction, entity_vectors: list[list[float]], fact_vectors: list[list[float]]
    ) -> Resolution:
        """One store round trip: the entities' matches, the relations around them, and the memory
        candidates of the facts and of the matched endpoints of the extracted relations (the scope's
        own node aside: nearly every memory is about the user)."""
        if not extracted.entities and not fact_vectors:
            return Resolution([], [], [], [], [])
        endpoints = {k for r in extracted.relations for k in (r.source, r.destination)} - {canonical_name(scope.self_name)}
        candidates = [
            EntityCandidate(canonical=k, embedding=v, mention=k in endpoints)
            for k, v in zip(extracted.entities, entity_vectors, strict=False)
        ]
        return self.store.resolve(scope, candidates, self.threshold, fact_vectors, SIMILAR_MEMORIES, MENTIONING_MEMORIES)

    def _resolve(self, extracted: GraphExtraction, vectors: list[list[float]], found: Resolution) -> dict[str, EntityWrite]:
        """Map every extracted canonical name to an existing entity of the scope or a new one."""
        resolved: dict[str, EntityWrite] = {}
        for key, vector, match in zip(extracted.entities, vectors, found.matches, strict=False):
            item = extracted.entities[key]
            if match is not None:
                resolved[key] = EntityWrite(
                    match.id, match.name, match.canonical, match.entity_type, vector, is_new=False, attributes=item.attributes
                )
            else:
                label = self.extraction.rules.label(item.entity_type)
                resolved[key] = EntityWrite(new_id(), item.name, key, item.entity_type, vector, True, item.attributes, label)
        return resolved

    def _candidates(
        self,
        scope: Scope,
        vectors: list[list[float]],
        entities: dict[str, EntityWrite],
        relations: list[ExtractedRelation],
        retired: list[Relation],
        found: Resolution,
    ) -> tuple[list[MemoryItem], dict[str, list[Relation]]]:
        """The memories the update stage sees, and for each memory stating a retired relation, those
        relations. ``found`` read them for the matched relation endpoints already; one more round trip
        (whatever the number of triples) only when the wanted entities differ from those, mostly
        because a retired relation ends at an entity this add did not name. With no new fact, only
        the memories that state a retired relation (they are out of date, and nothing else changed)."""
        if not vectors and not retired:
            return [], {}
        self_key = canonical_name(scope.self_name)
        self_ids = {e.id for k, e in entities.items() if k == self_key}
        wanted = {entities[k].id for r in relations for k in (r.source, r.destination) if not entities[k].is_new}
        wanted |= {i for r in retired for i in (r.source_id, r.destination_id)}
        wanted -= self_ids | _self_named(retired, self_key)
        similar, mentioning = found.similar, found.mentioning
        if wanted != set(found.mention_ids):
            similar, mentioning = self.store.memory_candidates(scope, vectors, SIMILAR_MEMORIES, sorted(wanted), MENTIONING_MEMORIES)
        seen: dict[str, MemoryItem] = {}
        for hits in similar:
            for item in hits:
                if (item.score or 0.0) >= self.similar_threshold:
                    seen.setdefault(item.id, item)
        for item in mentioning:
            seen.setdefault(item.id, item)
        stale: dict[str, list[Relation]] = {}
        for item in seen.values():
            for rel in retired:
                ends = {rel.source_id, rel.destination_id} - self_ids - _self_named([rel], self_key)
                if ends and ends <= set(item.mentions):
                    stale.setdefault(item.id, []).append(rel)
        if not vectors:
            return [m for m in seen.values() if m.id in stale], stale
        return list(seen.values()), stale

    def _decide_memories(
        self, facts: list[str], candidates: list[MemoryItem], stale: dict[str, list[Relation]], reference_time: datetime,
        self_name: str = "",
    ) -> tuple[list[Decision], int]:
        if not facts and not stale:  # nothing new and nothing out of date: no LLM call
            return [], 0
        if not candidates:  # nothing to reconcile with: no LLM call
            return [Decision("ADD", f) for f in facts], 0
        return self.memory_update.run(facts, candidates, reference_time, stale, self_name)

    def _memory_write(
        self,
        decision: Decision,
        fact_vector: dict[str, list[float]],
        entities: dict[str, EntityWrite],
        metadata: dict[str, Any],
        reference_time: datetime,
    ) -> MemoryWrite:
        if decision.event == "DELETE":
            assert decision.memory is not None
            return MemoryWrite("DELETE", decision.memory.id, invalid_at=self._ended(decision.memory, reference_time))
        vector = fact_vector[decision.text]
        folded = decision.text.casefold()
        mentioned = sorted({e.id for e in entities.values() if e.name.casefold() in folded})
        memory_id = decision.memory.id if decision.memory else new_id()
        write = MemoryWrite(decision.event, memory_id, decision.text, vector, metadata if decision.event == "ADD" else None, "user", mentioned)
        write.valid_at = reference_time  # event time: when the text became true (the add's timestamp)
        return write

    @staticmethod
    def _ended(memory: MemoryItem, reference_time: datetime) -> datetime:
        """When a retired memory stopped being true: the add's time, never before it began (a late,
        backdated add retiring a newer memory closes it where it started)."""
        start = memory.valid_at or memory.created_at
        return max(reference_time, start) if start is not None else reference_time


def _self_named(relations: list[Relation], self_key: str) -> set[str]:
    """Ids of the endpoints that are the scope's own node (found by name when it was not extracted)."""
    return {
        i for r in relations for i, name in ((r.source_id, r.source), (r.destination_id, r.destination))
        if canonical_name(name) == self_key
    }  # fmt: skip


def _log_dropped(outcome: AddOutcome) -> None:
    counts = outcome.dropped_counts()
    if counts:
        why = "".join(f"\n  {reason}" for reason in outcome.drop_reasons)
        log.warning("add %s: dropped unusable or over-the-limit items from the model: %s%s", outcome.add_id, counts, why)


def log_messages(messages: list[Message], reference_time: datetime) -> list[LoggedMessage]:
    return [LoggedMessage(m.role, m.content, reference_time) for m in messages]


def _plan_graph(
    write: GraphWrite,
    entities: dict[str, EntityWrite],
    relations: list[ExtractedRelation],
    retired: list[Relation],
    reference_time: datetime,
    facts: RelationFacts | None = None,
) -> None:
    seen: dict[str, EntityWrite] = {}
    for entity in entities.values():
        if entity.id not in seen:  # two names resolving to one node touch it once
            seen[entity.id] = entity
            write.entities.append(entity)
        else:
            seen[entity.id].attributes.update(entity.attributes)
    planned: set[tuple[str, str, str]] = set()
    for rel in relations:
        ids = (entities[rel.source].id, rel.relationship, entities[rel.destination].id)
        if ids not in planned:
            planned.add(ids)
            fact, vector = (facts or {}).get(rel.key, (None, None))
            write.relations.append(RelationWrite(ids[0], rel.relationship, ids[2], valid_at=rel.valid_at or reference_time,
                                                 invalid_at=rel.invalid_at, fact=fact, fact_embedding=vector))
    for old in retired:
        replacement = _replacement(old, write.relations)
        ended = replacement.valid_at if replacement else reference_time
        if old.valid_at is not None and ended <= old.valid_at:
            # Ingested late: the new fact is older than the one it contradicts. The newer fact stays
            # current; the older one becomes a closed interval ending when the newer one began.
            if replacement is not None and (replacement.invalid_at is None or replacement.invalid_at > old.valid_at):
                replacement.invalid_at = old.valid_at
            continue
        write.invalidations.append(Invalidation(old.id, ended))


def _replacement(old: Relation, new: list[RelationWrite]) -> RelationWrite | None:
    """The new relation that takes over from a retired one: same source and relationship."""
    for rel in new:
        if rel.source_id == old.source_id and rel.relationship == old.relationship and rel.destination_id != old.destination_id:
            return rel
    return None
