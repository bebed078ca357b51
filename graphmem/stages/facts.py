"""Short memory facts from the newest messages (tool ``extract_facts``)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from graphmem.llm.base import LLM, ToolSpec
from graphmem.observability.decorators import traced_stage
from graphmem.stages.base import PromptTemplate
from graphmem.stages.conversation import Message, user_prompt
from graphmem.types import clean_text, iso

#: Facts longer than this are cut (documented rule: a fact is a sentence, not a document).
MAX_FACT_CHARS = 1000
#: Most facts one add keeps from the model (README: Input rules); the rest is dropped and counted.
MAX_FACTS_PER_ADD = 200

FACTS_TOOL = ToolSpec(
    name="extract_facts",
    description="Record short, self-contained facts about the user from the newest messages.",
    parameters={
        "type": "object",
        "properties": {"facts": {"type": "array", "items": {"type": "string"}}},
        "required": ["facts"],
        "additionalProperties": False,
    },
)


class FactExtractionStage:
    name = "facts"

    def __init__(self, llm: LLM, custom_prompt: str | None = None) -> None:
        self.llm = llm
        self.template = PromptTemplate.load("extract_facts")
        self.custom_prompt = custom_prompt

    @traced_stage
    def run(
        self, messages: list[Message], self_name: str, reference_time: datetime, context: str = "", prompt: str | None = None
    ) -> tuple[list[str], int]:
        """Distinct facts in order of appearance, and the number of unusable items dropped. ``prompt``
        (mem0's ``add(prompt=...)``) replaces the system prompt for this call."""
        values = {"self_name": self_name, "reference_time": iso(reference_time)}
        system = self.template.system_prompt(prompt or self.custom_prompt, **values)
        chat = [{"role": "system", "content": system}, {"role": "user", "content": user_prompt(messages, reference_time, context)}]
        return parse_facts(self.llm.call_tool(self.name, chat, FACTS_TOOL))


def parse_facts(calls: list[dict[str, Any]]) -> tuple[list[str], int]:
    """Distinct, cleaned, capped facts of the model's ``extract_facts`` calls, and the unusable count."""
    facts: list[str] = []
    seen: set[str] = set()
    dropped = 0
    for call in calls:
        items = call.get("facts")
        if not isinstance(items, list):
            dropped += 1
            continue
        for item in items:
            text = clean_text(item)[:MAX_FACT_CHARS].strip() if isinstance(item, str) else ""
            if not text:
                dropped += 1
                continue
            key = text.casefold()
            if key in seen:  # duplicate facts within one add count once
                continue
            if len(facts) >= MAX_FACTS_PER_ADD:
                dropped += 1
                continue
            seen.add(key)
            facts.append(text)
    return facts, dropped
