"""LLM clients. Stages depend on :class:`LLM`; :class:`OpenAILLM` speaks to any OpenAI-compatible server.

``OpenAILLM`` is loaded on first access (it pulls in tenacity; the openai SDK itself only loads on
the first request), so importing graphmem stays cheap.

May import the foundation and stages (structured output reads the stages' tool schemas); never
stores or anything above.
"""

from typing import TYPE_CHECKING, Any

from graphmem.llm.base import LLM, LLMUsage, ToolCallResult, ToolSpec

if TYPE_CHECKING:
    from graphmem.llm.openai import OpenAILLM


def __getattr__(name: str) -> Any:
    if name == "OpenAILLM":
        from graphmem.llm.openai import OpenAILLM

        return OpenAILLM
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["LLM", "LLMUsage", "OpenAILLM", "ToolCallResult", "ToolSpec"]
