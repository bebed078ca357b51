"""Reconcile new facts with similar existing memories (tool ``update_memory``).

Existing memories are shown under short integer ids ("0", "1", ...), never their UUIDs; the answer
is mapped back. Ids the model invents are ignored for UPDATE / DELETE (an invented id with ADD is
just an add); a second decision about one memory is ignored.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator

from graphmem.llm.base import LLM, ToolSpec
from graphmem.observability.decorators import traced_stage
from graphmem.results import MemoryEvent
from graphmem.stages.base import PromptTemplate, validate_items
from graphmem.stages.facts import MAX_FACT_CHARS
from graphmem.stages.self_refs import name_self
from graphmem.types import MemoryItem, Relation, clean_text, iso

UPDATE_TOOL = ToolSpec(
    name="update_memory",
    description="Decide for each memory and new fact: ADD, UPDATE, DELETE or NONE.",
    parameters={
        "type": "object",
        "properties": {
            "memory": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "id": {"type": "string"},
                        "text": {"type": "string"},
                        "event": {"type": "string", "enum": ["ADD", "UPDATE", "DELETE", "NONE"]},
                        "old_memory": {"type": "string"},
                    },
                    "required": ["id", "text", "event"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["memory"],
        "additionalProperties": False,
    },
)


class DecisionArgs(BaseModel):
    id: str = Field(min_length=0)
    text: str = ""
    event: Literal["ADD", "UPDATE", "DELETE", "NONE"]
    old_memory: str | None = None

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, v: object) -> object:
        return str(v) if isinstance(v, int) and not isinstance(v, bool) else v

    @field_validator("event", mode="before")
    @classmethod
    def _upper(cls, v: object) -> object:
        return v.strip().upper() if isinstance(v, str) else v


@dataclass
class Decision:
    event: MemoryEvent
    text: str
    memory: MemoryItem | None = None  # the existing memory for UPDATE / DELETE


def _shown(short_id: str, memory: MemoryItem, ended: list[Relation]) -> dict[str, object]:
    out: dict[str, object] = {"id": short_id, "text": memory.text}
    if ended:
        out["no_longer_true"] = [f"{r.source} {r.relationship} {r.destination}" for r in ended]
    return out


class MemoryUpdateStage:
    name = "memory_update"

    def __init__(self, llm: LLM, custom_prompt: str | None = None) -> None:
        self.llm = llm
        self.template = PromptTemplate.load("update_memory")
        self.custom_prompt = custom_prompt

    @traced_stage
    def run(
        self,
        facts: list[str],
        existing: list[MemoryItem],
        reference_time: datetime,
        stale: Mapping[str, list[Relation]] | None = None,
        self_name: str = "",
    ) -> tuple[list[Decision], int]:
        """``stale``: memory id -> the relations it states that this add ended; shown with the memory
        as ``no_longer_true``. ``self_name``: the user's name, for the placeholder USER_ID in texts."""
        values = {"reference_time": iso(reference_time)}
        system = self.template.system_prompt(self.custom_prompt, **values)
        shown, listing = memory_listing(existing, stale)
        user = f"Existing memories:\n{listing}\n\nNew facts:\n" + json.dumps(facts, ensure_ascii=False, indent=1)
        chat = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        return decide(self.llm.call_tool(self.name, chat, UPDATE_TOOL), shown, self_name)


def memory_listing(existing: list[MemoryItem], stale: Mapping[str, list[Relation]] | None = None) -> tuple[dict[str, MemoryItem], str]:
    """The memories as the model sees them: JSON objects under short integer ids (never UUIDs), and
    the id -> memory map that ``decide`` maps the answer back with."""
    shown = {str(i): m for i, m in enumerate(existing)}
    listing = json.dumps([_shown(k, m, (stale or {}).get(m.id, [])) for k, m in shown.items()], ensure_ascii=False, indent=1)
    return shown, listing


def decide(calls: list[dict[str, Any]], shown: Mapping[str, MemoryItem], self_name: str = "") -> tuple[list[Decision], int]:
    """The model's ``update_memory`` calls as decisions about the ``shown`` memories, and how many
    items were unusable (ids it was not shown, second decisions on one memory, malformed items).
    ``self_name``: the user's name, for the placeholder USER_ID in texts."""
    decisions: list[Decision] = []
    touched: set[str] = set()
    dropped = 0
    for call in calls:
        items, bad = validate_items(call.get("memory"), DecisionArgs)
        dropped += bad
        for item in items:
            text = name_self(clean_text(item.text), self_name)[:MAX_FACT_CHARS].strip()
            if item.event == "ADD":
                if text and text.casefold() not in {d.text.casefold() for d in decisions if d.event == "ADD"}:
                    decisions.append(Decision("ADD", text))
                continue
            target = shown.get(item.id.strip())
            if target is None or item.id in touched:
                if item.event != "NONE":
                    dropped += 1  # an id it was not shown, or a second decision on one memory
                continue
            touched.add(item.id)
            if item.event == "UPDATE" and text and text != target.text:
                decisions.append(Decision("UPDATE", text, target))
            elif item.event == "DELETE":
                decisions.append(Decision("DELETE", target.text, target))
    return decisions, dropped
