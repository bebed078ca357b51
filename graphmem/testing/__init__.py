"""Test helpers for graphmem: a scripted, OpenAI-compatible local LLM server."""

from .scripted_server import DEFAULT_REPLIES, Fault, RecordedRequest, ScriptedLLMServer

__all__ = ["DEFAULT_REPLIES", "Fault", "RecordedRequest", "ScriptedLLMServer"]
