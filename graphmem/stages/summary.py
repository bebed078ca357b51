"""The rolling conversation summary (tool ``summarize``)."""

from __future__ import annotations

from pydantic import BaseModel

from graphmem.llm.base import LLM, ToolSpec
from graphmem.observability.decorators import traced_stage
from graphmem.stages.base import PromptTemplate, validate_items
from graphmem.stages.conversation import Message, render_messages
from graphmem.types import clean_text

#: A summary longer than this is cut: the summary rides along in every extraction prompt.
MAX_SUMMARY_CHARS = 3000

SUMMARY_TOOL = ToolSpec(
    name="summarize",
    description="Record the new running summary of the conversation.",
    parameters={
        "type": "object",
        "properties": {"summary": {"type": "string"}},
        "required": ["summary"],
        "additionalProperties": False,
    },
)


class SummaryArgs(BaseModel):
    summary: str


class SummaryStage:
    name = "summary"

    def __init__(self, llm: LLM) -> None:
        self.llm = llm
        self.template = PromptTemplate.load("summarize")

    @traced_stage
    def run(self, previous: str | None, messages: list[Message], self_name: str) -> str | None:
        """The new summary, or None when the model gave nothing usable."""
        user = f"Previous summary:\n{previous or '(none)'}\n\nMessages since:\n{render_messages(messages)}"
        chat = [{"role": "system", "content": self.template.render(self_name=self_name)}, {"role": "user", "content": user}]
        items, _ = validate_items(self.llm.call_tool(self.name, chat, SUMMARY_TOOL), SummaryArgs)
        texts = [clean_text(i.summary) for i in items if i.summary.strip()]
        return texts[-1][:MAX_SUMMARY_CHARS] if texts else None
