"""Request bodies of the REST routes (mem0's fields, plus graphmem's time travel); unknown fields
are refused with a 422 naming them. Sizes (message length, messages per add, query length, ...) are
not checked here: the core checks them (graphmem.schema.limits), so REST refuses what every other door
refuses, with the same LimitExceededError (400); the schema shows them as maxLength / maxItems."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from graphmem.schema import limits


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Message(_Body):
    role: Literal["user", "assistant", "system"]
    content: str = Field(json_schema_extra={"maxLength": limits.MESSAGE_CHARS})


class MemoryCreate(_Body):
    messages: list[Message] = Field(min_length=1, json_schema_extra={"maxItems": limits.MESSAGES_PER_ADD})
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    metadata: dict[str, Any] | None = None
    infer: bool = True
    timestamp: str | None = Field(None, description="when the messages were said, ISO-8601 (default now)")


class MemoryUpdate(_Body):
    """mem0 clients send the new text as ``text`` (``data`` and ``memory`` are accepted too)."""

    text: str | None = None
    data: str | None = None
    memory: str | None = None

    @model_validator(mode="after")
    def _one_text(self) -> MemoryUpdate:
        given = [v for v in (self.text, self.data, self.memory) if v is not None]
        if len(given) != 1:
            raise ValueError("give the new text in exactly one of text, data, memory")
        return self

    def new_text(self) -> str:
        return next(v for v in (self.text, self.data, self.memory) if v is not None)


class SearchRequest(_Body):
    query: str = Field(json_schema_extra={"maxLength": limits.QUERY_CHARS})
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    filters: dict[str, Any] | None = None
    limit: int = Field(100, ge=1, le=1000)
    threshold: float | None = None
    as_of: str | None = Field(None, description="event time, ISO-8601: what was true then (default now)")
    known_at: str | None = Field(None, description="transaction time, ISO-8601: what graphmem believed then")
