"""One ``add`` with one model request (``add_mode: "single_pass"``).

Critical path, each step a fixed number of calls whatever the number of triples or facts:
1. embed     one embedding request for the newest messages
2. read      one store round trip (store.add_context): current relations around the own node and
             the entities named in or close to the messages, memories similar to the messages and
             the live memories mentioning the entities of those relations, each list bounded
3. ask       ONE chat request offering the five documented tools (stages/single_pass.py)
4. embed     one embedding request for the new entity names, facts and relation facts
5. resolve   entity resolution as in the staged mode (store.resolve: name, then cosine >= threshold,
             inside the scope), skipped when nothing was extracted
6. write     the staged mode's own assembly and write (AddPipeline._assemble, one transaction)
Retirements are matched against the relations shown (stages.invalidation.retire) and memory
decisions against the memories shown (stages.memory_update.decide): the model can only retire or
change what it was shown, as in the staged mode. Nothing is written before step 6.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from graphmem.ingest.add import AddOutcome, AddPipeline
from graphmem.ingest.context import render_context
from graphmem.stages.conversation import Message, render_messages
from graphmem.stages.invalidation import retire
from graphmem.stages.memory_update import Decision, decide, memory_listing
from graphmem.stages.single_pass import SinglePassAnswer, SinglePassStage
from graphmem.stores.base import AddContext, AddContextQuery, EntityCandidate, Resolution
from graphmem.types import Conversation, MemoryItem, Scope, canonical_name, new_id

#: the bounds of what the one request sees (docs/add-modes.md): enough for the reconciliation of a
#: conversation turn, and a prompt that stops growing with the scope
CONTEXT_ENTITIES = 10
CONTEXT_RELATIONS = 100
CONTEXT_SIMILAR = 5
CONTEXT_MENTIONING = 20
#: least cosine between the messages and an entity for it to be a seed (names are short, messages long)
SEED_THRESHOLD = 0.3


class SinglePassPipeline(AddPipeline):
    def __init__(self, single: SinglePassStage, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.single = single

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
        """Everything up to the write (nothing is written here), with one chat request."""
        outcome = AddOutcome(add_id=new_id())
        if conversation is not None:
            outcome.conversation = conversation
        elif self.read_log:
            outcome.conversation = self.store.conversation(scope, self.recent_messages)
        seen = self.context(scope, messages)
        shown, listing = memory_listing(self._shown_memories(seen))
        answer = self.single.run(messages, scope.self_name, reference_time, render_context(outcome.conversation),
                                 seen.relations, listing, prompt)
        extracted = answer.extraction
        facts = [] if graph_only else answer.facts
        outcome.dropped.update(extracted.dropped)
        outcome.drop_reasons += extracted.reasons
        outcome.dropped["facts"] += answer.dropped_facts
        outcome.off_ontology = extracted.off_ontology

        keys = list(extracted.entities)
        entity_vectors, fact_vectors = self._embed_add(outcome, scope, extracted, facts)
        candidates = [EntityCandidate(k, v) for k, v in zip(keys, entity_vectors, strict=True)]
        found = self.store.resolve(scope, candidates, self.threshold, [], 0, 0) if candidates else Resolution([], [], [], [], [])
        entities = self._resolve(extracted, entity_vectors, found)
        outcome.names = {e.id: e.name for e in entities.values()}
        new_relations = [r for r in extracted.relations if entities[r.source].id != entities[r.destination].id]
        outcome.retired, dropped = retire(answer.retire_calls, seen.relations, new_relations, scope.self_name)
        outcome.dropped["invalidations"] += dropped
        decisions, dropped = _decisions(answer, facts, shown, scope.self_name)
        outcome.dropped["memory"] += dropped
        self._assemble(outcome, scope, messages, entities, new_relations, seen.relations, decisions,
                       dict(zip(facts, fact_vectors, strict=False)), metadata, reference_time)
        return outcome

    def context(self, scope: Scope, messages: list[Message]) -> AddContext:
        """The one read before the request: one embedding request and one store round trip."""
        text = render_messages([m for m in messages if m.role != "system"]) or render_messages(messages)
        (vector,) = self._embed([text])
        query = AddContextQuery(canonical_name(scope.self_name), vector, text, CONTEXT_ENTITIES, SEED_THRESHOLD,
                                CONTEXT_RELATIONS, CONTEXT_SIMILAR, CONTEXT_MENTIONING)
        return self.store.add_context(scope, query)

    def _shown_memories(self, seen: AddContext) -> list[MemoryItem]:
        """The similar memories over the threshold (as the staged mode's), then the mentioning ones."""
        out: dict[str, MemoryItem] = {}
        for item in seen.similar:
            if (item.score or 0.0) >= self.similar_threshold:
                out.setdefault(item.id, item)
        for item in seen.mentioning:
            out.setdefault(item.id, item)
        return list(out.values())


def _decisions(answer: SinglePassAnswer, facts: list[str], shown: dict[str, MemoryItem], self_name: str) -> tuple[list[Decision], int]:
    """As the staged mode: nothing shown (or no update_memory call at all: the tool contributes
    nothing), every fact is new; else the model's decisions, with no new fact too (the memories
    stating a relation it retired: the prompt asks for them)."""
    if not shown or answer.update_calls is None:
        return [Decision("ADD", f) for f in facts], 0
    return decide(answer.update_calls, shown, self_name)
