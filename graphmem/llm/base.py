"""The LLM interface the stages depend on: one forced tool call per request."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ToolSpec:
    """A function tool offered to the model (the stable contract in the README)."""

    name: str
    description: str
    parameters: dict[str, Any]

    def as_openai(self) -> dict[str, Any]:
        return {"type": "function", "function": {"name": self.name, "description": self.description, "parameters": self.parameters}}


@dataclass
class ToolCallResult:
    """The parsed argument objects of every usable tool call, by tool name, plus accounting."""

    calls: dict[str, list[dict[str, Any]]]
    dropped: int = 0  # calls that were not valid JSON objects or named a tool that was not offered
    prompt_tokens: int = 0
    completion_tokens: int = 0
    #: how the calls came back: "tool_calls", "named_choice" (one request per tool after the server
    #: refused "required"), "text" (parsed from the answer's content) or "json" (JSON mode)
    mode: str = "tool_calls"

    def of(self, tool: str) -> list[dict[str, Any]]:
        return self.calls.get(tool, [])


@dataclass
class LLMUsage:
    """Counters kept per stage so benchmarks and the CLI can report cost."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    per_stage: dict[str, dict[str, int]] = field(default_factory=dict)
    refused: int = 0  # requests the server refused (400) that the client then adapted to

    def record(self, stage: str, prompt_tokens: int, completion_tokens: int) -> None:
        self.calls += 1
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        row = self.per_stage.setdefault(stage, {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0})
        row["calls"] += 1
        row["prompt_tokens"] += prompt_tokens
        row["completion_tokens"] += completion_tokens


class LLM(ABC):
    usage: LLMUsage

    @abstractmethod
    def call_tools(self, stage: str, messages: list[dict[str, str]], tools: list[ToolSpec]) -> ToolCallResult:
        """Send one chat-completions request offering ``tools``; return the parsed calls.

        One tool is forced by name; several are offered with ``tool_choice="required"`` so the model
        can call each in the same answer (one request instead of one per tool). Raises
        LLMUnavailableError when the endpoint keeps failing, LLMResponseError when the answer holds
        no usable call of any offered tool.
        """

    def prepare(self) -> None:  # noqa: B027 - optional hook: most models have nothing to build ahead
        """Build what the first request would build (an SDK client, its imports), so the first add
        does not pay for it. Never raises: a client that cannot be built fails on first use, with
        its clear error. Memory calls it on a background thread after set-up."""

    def call_tool(self, stage: str, messages: list[dict[str, str]], tool: ToolSpec) -> list[dict[str, Any]]:
        """Forced single-tool request; the argument objects of its calls."""
        return self.call_tools(stage, messages, [tool]).of(tool.name)
