"""LLM clients. Stages depend on :class:`LLM`; :class:`OpenAILLM` speaks to any OpenAI-compatible server."""

from graphmem.llm.base import LLM, LLMUsage, ToolCallResult, ToolSpec
from graphmem.llm.openai import OpenAILLM

__all__ = ["LLM", "LLMUsage", "OpenAILLM", "ToolCallResult", "ToolSpec"]
