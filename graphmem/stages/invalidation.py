"""Which current relations the newest messages contradict (tool ``delete_graph_memory``).

The model names triples; they are mapped back to the existing relations shown to it, so a model
can only retire what it was shown, never something of another scope or an invented relation.
One call with a list or several calls with one triple each are both accepted.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from graphmem.llm.base import LLM, ToolSpec
from graphmem.observability.decorators import traced_stage
from graphmem.stages.base import PromptTemplate, validate_items
from graphmem.stages.conversation import Message, user_prompt
from graphmem.stages.graph_extraction import ExtractedRelation
from graphmem.stages.self_refs import is_self
from graphmem.types import Relation, canonical_name, iso, sanitize_relation_type

INVALIDATION_TOOL = ToolSpec(
    name="delete_graph_memory",
    description="Retire existing relations that the newest messages show are no longer true.",
    parameters={
        "type": "object",
        "properties": {
            "relations": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "source": {"type": "string"},
                        "relationship": {"type": "string"},
                        "destination": {"type": "string"},
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


class TripleArgs(BaseModel):
    source: str = Field(min_length=1)
    relationship: str = Field(min_length=1)
    destination: str = Field(min_length=1)


def triple_key(source: str, relationship: str, destination: str) -> tuple[str, str, str]:
    return (canonical_name(source), sanitize_relation_type(relationship), canonical_name(destination))


class InvalidationStage:
    name = "invalidation"

    def __init__(self, llm: LLM, custom_prompt: str | None = None) -> None:
        self.llm = llm
        self.template = PromptTemplate.load("delete_graph_memory")
        self.custom_prompt = custom_prompt

    @traced_stage
    def run(
        self,
        messages: list[Message],
        existing: list[Relation],
        new: list[ExtractedRelation],
        names: dict[str, str],
        self_name: str,
        reference_time: datetime,
        context: str = "",
    ) -> tuple[list[Relation], int]:
        """The existing relations to retire, and how many of the model's items were unusable.

        ``names`` maps canonical names of the new triples to display names.
        """
        values = {"self_name": self_name, "reference_time": iso(reference_time)}
        system = self.template.system_prompt(self.custom_prompt, **values)
        shown = "\n".join(f"- {r.source} -- {r.relationship} -- {r.destination}" for r in existing)
        added = "\n".join(f"- {names.get(r.source, r.source)} -- {r.relationship} -- {names.get(r.destination, r.destination)}" for r in new)
        extra = f"Existing relations:\n{shown}\n\nNew relations from the newest messages:\n{added or '- (none)'}"
        if context:
            extra = f"{context}\n\n{extra}"
        chat = [{"role": "system", "content": system}, {"role": "user", "content": user_prompt(messages, reference_time, extra)}]
        return retire(self.llm.call_tool(self.name, chat, INVALIDATION_TOOL), existing, new, self_name)


def retire(calls: list[dict[str, Any]], existing: list[Relation], new: list[ExtractedRelation], self_name: str = "") -> tuple[list[Relation], int]:
    """The relations of ``existing`` that the model's ``delete_graph_memory`` calls name (matched by
    canonical triple, a self-reference as the user ``self_name``; never one the same messages assert
    again), and how many items were unusable."""
    by_key: dict[tuple[str, str, str], list[Relation]] = {}
    for rel in existing:
        by_key.setdefault(triple_key(rel.source, rel.relationship, rel.destination), []).append(rel)
    reasserted = {r.key for r in new}
    retired: dict[str, Relation] = {}
    dropped = 0
    for call in calls:
        # one triple per call is accepted as well as a list
        raw = call.get("relations") if "relations" in call else [call]
        items, bad = validate_items(raw, TripleArgs)
        dropped += bad
        for item in items:
            source = self_name if is_self(item.source, self_name) else item.source
            destination = self_name if is_self(item.destination, self_name) else item.destination
            key = triple_key(source, item.relationship, destination)
            matches = by_key.get(key)
            if not matches or key in reasserted:
                dropped += 1  # not shown to the model, or asserted again by the same messages
                continue
            for rel in matches:
                retired[rel.id] = rel
    return list(retired.values()), dropped
