"""Test helpers for graphmem: a fake model for your own tests (:class:`FakeModel`, and the pytest
fixture ``fake_model``), built on the scripted, OpenAI-compatible local server graphmem's own
suite uses (:class:`ScriptedLLMServer`).

An interface for test suites: may import anything below it and cli's demo (``graphmem-fake``
runs it); cli imports it for the offline demo.
"""

from .fake import FakeModel, Rule
from .scripted_server import DEFAULT_REPLIES, Fault, RecordedRequest, ScriptedLLMServer

__all__ = ["DEFAULT_REPLIES", "FakeModel", "Fault", "RecordedRequest", "Rule", "ScriptedLLMServer"]
