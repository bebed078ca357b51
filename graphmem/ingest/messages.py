"""Turning what callers pass to ``add`` into messages, by documented rules (README: input rules).

- A string is one user message. A dict is one message. A list holds strings and/or dicts.
- A dict needs ``content``; ``role`` defaults to "user". Roles: user, assistant, system, tool.
  Any other role is an InvalidInputError (before any LLM call).
- Content may be a string, a number or bool (converted with str), None (the message is skipped), or a
  list of OpenAI content parts (the ``text`` of text parts is joined; images are ignored). Anything
  else is an InvalidInputError.
- Text is NFC-normalised and control characters are removed. Empty messages are skipped.
- Extraction reads user and assistant messages; system and tool messages are not sources of facts.
- Each message is cut to ``max_chars`` characters for extraction (default 20,000).
- Bounds (graphmem.schema.limits): at most MESSAGES_PER_ADD messages, MESSAGE_CHARS characters of
  content each and ADD_CHARS together, counted as given (before cleaning); more is a LimitExceededError.
"""

from __future__ import annotations

from typing import Any

from graphmem.errors import InvalidInputError
from graphmem.schema import limits
from graphmem.stages.conversation import Message
from graphmem.types import clean_text

ROLES = limits.ROLES  # the one table's roles: every door accepts and refuses the same ones
EXTRACTED_ROLES = limits.EXTRACTED_ROLES


def parse_messages(messages: Any, max_chars: int = 20_000) -> list[Message]:
    """All non-empty messages, in order, with roles checked and content normalised."""
    if isinstance(messages, (str, dict)):
        items: list[Any] = [messages]
    elif isinstance(messages, (list, tuple)):
        items = list(messages)
    else:
        raise InvalidInputError(f"messages must be a string, a dict or a list, got {type(messages).__name__}")
    limits.too_long("messages", len(items), limits.MESSAGES_PER_ADD, "messages")
    out: list[Message] = []
    total = 0
    for i, item in enumerate(items):
        content: str | None
        if isinstance(item, str):
            role, content = "user", item
        elif isinstance(item, dict):
            role = item.get("role", "user")
            if role not in ROLES:
                raise InvalidInputError(f"messages[{i}]: unknown role {role!r}; use one of {', '.join(ROLES)}")
            content = _content_text(item.get("content"), i)
        else:
            raise InvalidInputError(f"messages[{i}] must be a string or a dict, got {type(item).__name__}")
        if content is not None:
            limits.too_long(f"messages[{i}].content", len(content), limits.MESSAGE_CHARS)
            total += len(content)
            limits.too_long("the messages of this add", total, limits.ADD_CHARS)
        text = clean_text(content)[:max_chars].strip() if content is not None else ""
        if text:
            out.append(Message(role=role, content=text))
    return out


def for_extraction(messages: list[Message]) -> list[Message]:
    return [m for m in messages if m.role in EXTRACTED_ROLES]


def _content_text(content: Any, index: int) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, bool | int | float):
        return str(content)
    if isinstance(content, list):
        parts = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
                parts.append(part["text"])
        return "\n".join(parts)
    raise InvalidInputError(f"messages[{index}].content must be text, got {type(content).__name__}")


def verbatim_messages(messages: Any) -> list[Message]:
    """What an infer=False add stores: every message but system ones, whole (no length cut)."""
    return [m for m in parse_messages(messages, max_chars=10**9) if m.role != "system"]
