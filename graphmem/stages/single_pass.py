"""The single-pass add's one request: the five documented tools offered together (README: LLM
contract), ``tool_choice`` "required", the model answering each tool in one message.

The request is built here; the answer is parsed by the staged stages' own parsers (graph extraction,
``parse_facts``), and the pipeline applies ``retire`` and ``decide`` once it knows the entities
(graphmem/ingest/single_pass.py). A tool the model leaves out contributes nothing: no follow-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from graphmem.llm.base import LLM
from graphmem.observability.decorators import traced_stage
from graphmem.stages.base import PromptTemplate
from graphmem.stages.conversation import Message, user_prompt
from graphmem.stages.facts import FACTS_TOOL, parse_facts
from graphmem.stages.graph_extraction import GraphExtraction, GraphExtractionStage
from graphmem.stages.invalidation import INVALIDATION_TOOL
from graphmem.stages.memory_update import UPDATE_TOOL
from graphmem.types import Relation, iso


@dataclass
class SinglePassAnswer:
    """The parsed answer; retirements and memory decisions stay raw until the entities are resolved."""

    extraction: GraphExtraction
    facts: list[str] = field(default_factory=list)
    dropped_facts: int = 0
    retire_calls: list[dict[str, Any]] = field(default_factory=list)
    update_calls: list[dict[str, Any]] | None = None  # None: the model did not call update_memory at all


class SinglePassStage:
    name = "single_pass"

    def __init__(self, llm: LLM, graph: GraphExtractionStage, fact_prompt: str | None = None) -> None:
        """``graph``: the staged extraction stage, whose ontology rules, tool schemas and parser the
        single request shares. ``fact_prompt``: custom_fact_extraction_prompt, given as the fact
        instructions (the other stages' custom prompts replace whole stage prompts: staged mode only)."""
        self.llm = llm
        self.graph = graph
        self.fact_prompt = fact_prompt
        self.template = PromptTemplate.load("single_pass")

    @traced_stage
    def run(
        self,
        messages: list[Message],
        self_name: str,
        reference_time: datetime,
        context: str,
        relations: list[Relation],
        memories: str,
        fact_prompt: str | None = None,
    ) -> SinglePassAnswer:
        """``memories``: the existing memories as listed to the model (memory_update.memory_listing);
        ``fact_prompt``: mem0's ``add(prompt=...)``, given as the fact instructions of this add."""
        rules = self.graph.rules
        values = {"self_name": self_name, "reference_time": iso(reference_time), "ontology": rules.section}
        system = self.template.render(**values)
        fact_prompt = fact_prompt or self.fact_prompt
        if fact_prompt:
            system += f"\nInstructions for extract_facts:\n{fact_prompt.strip()}\n"
        chat = [{"role": "system", "content": system},
                {"role": "user", "content": user_prompt(messages, reference_time, _extra(context, relations, memories))}]
        tools = [self.graph.entities_tool, self.graph.relations_tool, FACTS_TOOL, INVALIDATION_TOOL, UPDATE_TOOL]
        result = self.llm.call_tools(self.name, chat, tools)
        out = SinglePassAnswer(self.graph.parse(result, self_name))
        out.facts, out.dropped_facts = parse_facts(result.of(FACTS_TOOL.name))
        out.retire_calls = result.of(INVALIDATION_TOOL.name)
        if UPDATE_TOOL.name in result.calls:
            out.update_calls = result.of(UPDATE_TOOL.name)
        return out


def _extra(context: str, relations: list[Relation], memories: str) -> str:
    """The sections before the newest messages, listed as the staged prompts list them."""
    shown = "\n".join(f"- {r.source} -- {r.relationship} -- {r.destination}" for r in relations)
    parts = [context] if context else []
    parts.append(f"Existing relations:\n{shown or '- (none)'}")
    parts.append(f"Existing memories:\n{memories}")
    return "\n\n".join(parts)
