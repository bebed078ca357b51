"""How messages are shown to the LLM stages."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from graphmem.types import iso


@dataclass(frozen=True)
class Message:
    role: str
    content: str


def render_messages(messages: list[Message]) -> str:
    return "\n".join(f"{m.role}: {m.content}" for m in messages)


def user_prompt(messages: list[Message], reference_time: datetime, extra: str = "") -> str:
    """The user turn of a stage: reference time, optional extra sections, then the newest messages."""
    parts = [f"Reference time: {iso(reference_time)}"]
    if extra:
        parts.append(extra.strip())
    parts.append("Newest messages:\n" + render_messages(messages))
    return "\n\n".join(parts)
