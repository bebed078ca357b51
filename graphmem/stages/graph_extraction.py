"""Entities and relations from the newest messages: one request offering both tools.

The tools are ``extract_entities`` and ``establish_relationships`` (README: LLM contract). When the
model answers with entities but no ``establish_relationships`` call at all, one forced follow-up
request asks for the relations alone.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field, field_validator

from graphmem.llm.base import LLM, ToolCallResult, ToolSpec
from graphmem.observability.decorators import traced_stage
from graphmem.schema.ontology import Ontology
from graphmem.stages.base import PromptTemplate, validate_items
from graphmem.stages.conversation import Message, user_prompt
from graphmem.stages.ontology_rules import OntologyRules
from graphmem.stages.self_refs import is_self
from graphmem.stages.times import parse_llm_time
from graphmem.types import canonical_name, display_name, iso, sanitize_relation_type

log = logging.getLogger(__name__)

ENTITIES_TOOL = ToolSpec(
    name="extract_entities",
    description="Record the entities the newest messages state something about.",
    parameters={
        "type": "object",
        "properties": {
            "entities": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "entity": {"type": "string", "description": "name of the entity"},
                        "entity_type": {"type": "string", "description": "one lowercase type word"},
                    },
                    "required": ["entity", "entity_type"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["entities"],
        "additionalProperties": False,
    },
)

RELATIONS_TOOL = ToolSpec(
    name="establish_relationships",
    description="Record the relations between entities that the newest messages state.",
    parameters={
        "type": "object",
        "properties": {
            "relations": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "source": {"type": "string"},
                        "relationship": {"type": "string", "description": "timeless snake_case verb phrase"},
                        "destination": {"type": "string"},
                        "valid_at": {"type": "string", "description": "ISO-8601 date the fact became true, if known"},
                        "invalid_at": {"type": "string", "description": "ISO-8601 date the fact stopped being true, if known"},
                    },
                    "required": ["source", "relationship", "destination"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["relations"],
        "additionalProperties": False,
    },
)

#: Most entities / relations one add keeps from the model (README: Input rules); the rest is dropped
#: and counted, so one runaway answer cannot stall an add or flood the graph.
MAX_ENTITIES_PER_ADD = 200
MAX_RELATIONS_PER_ADD = 500

# Words the model sometimes uses as an entity for the speaker resolve to the scope's user (self_refs.py).


class EntityArgs(BaseModel):
    entity: str = Field(min_length=1)
    entity_type: str = "entity"
    attributes: Any = None  # checked against the ontology item by item (OntologyRules.attributes)

    @field_validator("entity_type", mode="before")
    @classmethod
    def _type_or_default(cls, v: object) -> object:
        return v if isinstance(v, str) and v.strip() else "entity"


class RelationArgs(BaseModel):
    source: str = Field(min_length=1)
    relationship: str = Field(min_length=1)
    destination: str = Field(min_length=1)
    valid_at: str | None = None
    invalid_at: str | None = None


@dataclass
class ExtractedEntity:
    name: str
    canonical: str
    entity_type: str
    attributes: dict[str, Any] = field(default_factory=dict)  # validated ontology attributes


@dataclass
class ExtractedRelation:
    source: str  # canonical names
    relationship: str  # sanitised
    destination: str
    valid_at: datetime | None = None
    invalid_at: datetime | None = None

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.source, self.relationship, self.destination)


@dataclass
class GraphExtraction:
    entities: dict[str, ExtractedEntity] = field(default_factory=dict)  # by canonical name
    relations: list[ExtractedRelation] = field(default_factory=list)
    #: unusable or over-the-limit items the model produced, by kind ("entities", "relations", "calls")
    dropped: Counter[str] = field(default_factory=Counter)
    off_ontology: int = 0  # of those: types, relations or attribute values a strict ontology refused
    #: which relations were dropped and why, one line each (the add logs them beside the counts)
    reasons: list[str] = field(default_factory=list)
    _relation_keys: set[tuple[str, str, str]] = field(default_factory=set, repr=False)

    def keep_relation(self, relation: ExtractedRelation) -> None:
        """Append unless the same triple is already there (a set lookup: linear in the answer)."""
        if relation.key in self._relation_keys:
            return
        if len(self.relations) >= MAX_RELATIONS_PER_ADD:
            self.drop_relation(relation.key, f"over the limit of {MAX_RELATIONS_PER_ADD} relations per add")
            return
        self._relation_keys.add(relation.key)
        self.relations.append(relation)

    def drop_relation(self, triple: tuple[str, str, str], why: str) -> None:
        self.dropped["relations"] += 1
        self.reasons.append(f"relation ({', '.join(repr(x) for x in triple)}): {why}")


def _same_ends(rel: RelationArgs, self_name: str, is_self: bool) -> str:
    """Why a relation from an entity to itself is dropped; the common case is the user's own name
    given as the object of a relation from "I" (the user id is the name)."""
    if is_self:
        return (f"both ends are the user {self_name!r} (\"I\" and the user id name the same node), so it would be a "
                "relation from the user to itself")
    return "both ends are the same entity"


def _entity_type(text: str) -> str:
    return sanitize_relation_type(text).lower() if text else "entity"


class GraphExtractionStage:
    name = "graph_extraction"

    def __init__(self, llm: LLM, custom_prompt: str | None = None, ontology: Ontology | None = None) -> None:
        self.llm = llm
        self.template = PromptTemplate.load("extract_graph")
        self.relations_template = PromptTemplate.load("establish_relationships")
        self.custom_prompt = custom_prompt
        self.rules = OntologyRules(ontology)
        self.entities_tool = self.rules.entities_tool(ENTITIES_TOOL)
        self.relations_tool = self.rules.relations_tool(RELATIONS_TOOL)

    @traced_stage
    def run(self, messages: list[Message], self_name: str, reference_time: datetime, context: str = "") -> GraphExtraction:
        values = {"self_name": self_name, "reference_time": iso(reference_time), "ontology": self.rules.section}
        system = self.rules.system_prompt(self.template.system_prompt(self.custom_prompt, **values), bool(self.custom_prompt))
        chat = [{"role": "system", "content": system}, {"role": "user", "content": user_prompt(messages, reference_time, context)}]
        result = self.llm.call_tools(self.name, chat, [self.entities_tool, self.relations_tool])
        return self.parse(result, self_name, lambda out: self._ask_relations(out, messages, values, reference_time, context))

    def parse(
        self, result: ToolCallResult, self_name: str, follow_up: Callable[[GraphExtraction], list[dict[str, Any]]] | None = None
    ) -> GraphExtraction:
        """The entities and relations of an answer (validated, capped, ontology applied). ``follow_up``
        asks for the relations when the answer named entities but never called the relations tool
        (the staged pipeline); without it (single_pass) a missing call contributes nothing."""
        out = GraphExtraction()
        out.dropped["calls"] += result.dropped
        self_key = canonical_name(self_name)
        if self_key:  # the user's own node, typed person unless the ontology says otherwise below
            out.entities[self_key] = ExtractedEntity(self_name, self_key, self.rules.entity_type("person", "person") or "person")
        else:
            out.dropped["entities"] += 1
        for call in result.of(ENTITIES_TOOL.name):
            items, dropped = validate_items(call.get("entities"), EntityArgs)
            out.dropped["entities"] += dropped
            for item in items:
                self._add_entity(out, item.entity, item.entity_type, self_name, self_key, item.attributes)
        relation_calls = result.of(RELATIONS_TOOL.name)
        if not relation_calls and len(out.entities) > 1 and follow_up is not None:
            relation_calls = follow_up(out)
        for call in relation_calls:
            rels, dropped = validate_items(call.get("relations"), RelationArgs)
            out.dropped["relations"] += dropped
            for rel in rels:
                self._add_relation(out, rel, self_name, self_key, derive_entities=not result.of(ENTITIES_TOOL.name))
        # The user node is kept only when something connects to it.
        if self_key in out.entities and not any(self_key in (r.source, r.destination) for r in out.relations):
            if out.entities[self_key].name == self_name and len(out.entities) > 1 or not out.relations:
                out.entities.pop(self_key)
        return out

    def _ask_relations(self, out: GraphExtraction, messages: list[Message], values: dict[str, Any], reference_time: datetime, context: str) -> list[dict[str, Any]]:
        listing = "\n".join(f"- {e.name} ({e.entity_type})" for e in out.entities.values())
        system = self.relations_template.render(entities=listing, **values)
        chat = [{"role": "system", "content": system}, {"role": "user", "content": user_prompt(messages, reference_time, context)}]
        return self.llm.call_tool(RELATIONS_TOOL.name, chat, self.relations_tool)

    @staticmethod
    def _resolve(name: str, self_name: str, self_key: str) -> tuple[str, str]:
        shown = display_name(name)
        key = canonical_name(shown)
        if is_self(shown, self_name) or key == self_key:
            return self_name, self_key
        return shown, key

    def _add_entity(
        self, out: GraphExtraction, name: str, entity_type: str, self_name: str, self_key: str, attributes: Any = None
    ) -> str | None:
        shown, key = self._resolve(name, self_name, self_key)
        stored_type = self.rules.entity_type(_entity_type(entity_type), entity_type)
        if key == self_key and key in out.entities:
            if stored_type is not None and self.rules.ontology is not None:
                out.entities[key].entity_type = stored_type  # the user's own node takes a declared type
            stored_type = stored_type or out.entities[key].entity_type
        if not key or stored_type is None:
            out.dropped["entities"] += 1  # no name, or (strict ontology) a type outside the ontology
            out.off_ontology += int(bool(key))
            return None
        if key not in out.entities:
            if len(out.entities) >= MAX_ENTITIES_PER_ADD:
                out.dropped["entities"] += 1
                return None
            out.entities[key] = ExtractedEntity(name=shown, canonical=key, entity_type=stored_type)
        kept, dropped = self.rules.attributes(out.entities[key].entity_type, attributes)
        out.entities[key].attributes.update(kept)
        out.dropped["attributes"] += dropped
        out.off_ontology += dropped
        return key

    def _add_relation(self, out: GraphExtraction, rel: RelationArgs, self_name: str, self_key: str, derive_entities: bool) -> None:
        ends = []
        triple = (rel.source, rel.relationship, rel.destination)
        for name in (rel.source, rel.destination):
            _, key = self._resolve(name, self_name, self_key)
            if key not in out.entities:
                if not derive_entities or not key or self._add_entity(out, name, "entity", self_name, self_key) is None:
                    # an endpoint the model did not extract: not ours to invent
                    out.drop_relation(triple, f"{name!r} is not among the entities the model extracted")
                    return
            ends.append(key)
        if ends[0] == ends[1]:
            out.drop_relation(triple, _same_ends(rel, self_name, ends[0] == self_key))
            return
        relationship = self.rules.relationship(sanitize_relation_type(rel.relationship))
        types = [out.entities[k].entity_type for k in ends]
        if relationship is None or not self.rules.endpoints_fit(relationship, types[0], types[1]):
            out.drop_relation(triple, "the ontology does not allow this relation type between these entity types")
            out.off_ontology += 1
            return
        relation = ExtractedRelation(
            source=ends[0],
            relationship=relationship,
            destination=ends[1],
            valid_at=parse_llm_time(rel.valid_at),
            invalid_at=parse_llm_time(rel.invalid_at),
        )
        if relation.valid_at and relation.invalid_at and relation.invalid_at <= relation.valid_at:
            log.info("dropping invalid_at before valid_at for %s", relation.key)
            relation.invalid_at = None
        out.keep_relation(relation)
