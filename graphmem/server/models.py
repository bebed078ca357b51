"""Request bodies and query parameter types of the REST routes (mem0's fields, plus graphmem's time
travel). Types are strict: ``"yes"`` is not a boolean and ``"10"`` not a number in a JSON body; a
query parameter (text by nature) is a boolean only as ``true`` / ``false`` and a number only as
digits. Unknown fields are refused. Every refusal is an InvalidInputError (400, rest.py). Sizes and
the result limit (message length, messages per add, query length, ``limit``, ...) and roles are the
one table's (graphmem.schema.limits), checked by the core, so REST refuses what every door refuses
with the same error; the schema shows them as maxLength / maxItems / maximum."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator

from graphmem.schema import limits


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


def _query_bool(value: Any) -> Any:
    if isinstance(value, str):
        if value not in ("true", "false"):
            raise ValueError(f"must be true or false, got {value!r}")
        return value == "true"
    return value


def _query_int(value: Any) -> Any:
    if isinstance(value, str):
        if not re.fullmatch(r"-?[0-9]{1,19}", value):
            raise ValueError(f"must be a whole number, got {value!r}")
        return int(value)
    return value


#: query parameters: text by nature, read without guessing (no "yes", "on", "1.0")
QueryBool = Annotated[bool, BeforeValidator(_query_bool)]
QueryInt = Annotated[int, BeforeValidator(_query_int)]
#: the schema's view of ``limit``; the core checks it (graphmem.schema.arguments.check_limit)
LIMIT_SCHEMA: dict[str, Any] = {"minimum": 1, "maximum": limits.RESULT_LIMIT}


class Message(_Body):
    role: limits.Role
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
    limit: int = Field(100, json_schema_extra=LIMIT_SCHEMA)
    threshold: float | None = None
    as_of: str | None = Field(None, description="event time, ISO-8601: what was true then (default now)")
    known_at: str | None = Field(None, description="transaction time, ISO-8601: what graphmem believed then")
