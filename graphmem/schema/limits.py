"""graphmem's input limits: one table, enforced by the core.

``Memory`` and everything built on it (``AsyncMemory``, ``add_many``, ``graphmem import``, the REST
server, the MCP server over stdio and HTTP) check these bounds in the same place, so every door
accepts and refuses the same input, with the same error: :class:`~graphmem.errors.LimitExceededError`
(an ``InvalidInputError``; REST answers it with 400, MCP with a tool error). A bound is inclusive:
a value *at* the limit is accepted. The table in docs/python-api.md is :func:`markdown_table`'s
output (tests/test_limits.py checks it).

Why bounds at all: a value graphmem accepts must stay readable. Metadata nested a few hundred levels
deep used to be accepted and then broke every later read of its user (Python's JSON encoder and
pydantic's serialiser recurse), and a 10 MB message cost 20-30 s of CPU in one request.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from graphmem.errors import InvalidInputError, LimitExceededError
from graphmem.types import MAX_SCOPE_ID_CHARS as _SCOPE_ID_CHARS

#: characters in one message's content (a string, or the joined text parts of an OpenAI content list)
MESSAGE_CHARS = 100_000
#: messages in one add (a list; a string or a dict is one message)
MESSAGES_PER_ADD = 500
#: characters of all the messages of one add together
ADD_CHARS = 1_000_000
#: characters of the new text of ``update``
UPDATE_CHARS = 100_000
#: nesting levels of metadata: ``{"a": 1}`` is 1 level, ``{"a": {"b": [1]}}`` 3
METADATA_DEPTH = 16
#: characters of the metadata as compact JSON
METADATA_CHARS = 64_000
#: keys at the top level of metadata (each one is filterable)
METADATA_KEYS = 100
#: characters of one top-level metadata key
METADATA_KEY_CHARS = 200
#: characters of a search query
QUERY_CHARS = 10_000
#: characters of a filter as compact JSON
FILTER_CHARS = 64_000
#: nesting levels of AND / OR / NOT in a filter
FILTER_DEPTH = 8
#: conditions in one filter
FILTER_CONDITIONS = 100
#: values in one ``in`` / ``nin`` list of a filter
FILTER_LIST = 1000
#: ``limit`` of search and get_all
RESULT_LIMIT = 10_000
#: characters of a user_id, agent_id or run_id (checked by graphmem.types.check_scope_id)
SCOPE_ID_CHARS = _SCOPE_ID_CHARS
#: characters of an entity name given to timeline and forget_entity
ENTITY_CHARS = 1000
#: ``batch_size`` of add_many / ``graphmem import --batch-size``
BATCH_SIZE = 20_000
#: ``workers`` of add_many / ``graphmem import --workers``
BULK_WORKERS = 64
#: nesting levels of a whole request as it arrives (REST body, MCP JSON-RPC message): a guard in front
#: of the parsers, which recurse, so that metadata nested 1,000 deep is told the depth rule, not a parse error
REQUEST_DEPTH = 128

#: the roles a message may have, on every door (Python, add_many and import, REST, MCP)
Role = Literal["user", "assistant", "system", "tool"]
ROLES: tuple[str, ...] = get_args(Role)
#: the roles extraction reads; system and tool messages are context, not sources of facts
EXTRACTED_ROLES = ("user", "assistant")


@dataclass(frozen=True)
class Limit:
    """One row of the table: the constant's name, its value and what it bounds where."""

    name: str
    value: int
    bounds: str
    where: str


LIMITS: tuple[Limit, ...] = (
    Limit("MESSAGE_CHARS", MESSAGE_CHARS, "characters in one message's content", "add, add_many, import, REST POST /memories, MCP add_memory"),
    Limit("MESSAGES_PER_ADD", MESSAGES_PER_ADD, "messages in one add", "add, add_many, import, REST POST /memories, MCP add_memory"),
    Limit("ADD_CHARS", ADD_CHARS, "characters of all messages of one add", "add, add_many, import, REST POST /memories, MCP add_memory"),
    Limit("UPDATE_CHARS", UPDATE_CHARS, "characters of an update's new text", "update, REST PUT /memories/{id}, MCP update_memory"),
    Limit("METADATA_DEPTH", METADATA_DEPTH, "nesting levels of metadata (`{\"a\": 1}` is 1)", "add, add_many, import, update, REST, MCP"),
    Limit("METADATA_CHARS", METADATA_CHARS, "characters of metadata as compact JSON", "add, add_many, import, update, REST, MCP"),
    Limit("METADATA_KEYS", METADATA_KEYS, "top-level metadata keys", "add, add_many, import, update, REST, MCP"),
    Limit("METADATA_KEY_CHARS", METADATA_KEY_CHARS, "characters of a top-level metadata key", "add, add_many, import, update, filters"),
    Limit("QUERY_CHARS", QUERY_CHARS, "characters of a search query", "search, REST POST /search, MCP search_memory"),
    Limit("FILTER_CHARS", FILTER_CHARS, "characters of a filter as compact JSON", "search, get_all, REST, MCP, inspector"),
    Limit("FILTER_DEPTH", FILTER_DEPTH, "AND / OR / NOT nesting levels of a filter", "search, get_all, REST, MCP, inspector"),
    Limit("FILTER_CONDITIONS", FILTER_CONDITIONS, "conditions in a filter", "search, get_all, REST, MCP, inspector"),
    Limit("FILTER_LIST", FILTER_LIST, "values of one `in` / `nin`", "search, get_all, REST, MCP, inspector"),
    Limit("RESULT_LIMIT", RESULT_LIMIT, "`limit` of search and get_all", "search, get_all, REST, MCP"),
    Limit("SCOPE_ID_CHARS", SCOPE_ID_CHARS, "characters of user_id / agent_id / run_id", "every scoped call"),
    Limit("ENTITY_CHARS", ENTITY_CHARS, "characters of an entity name asked for", "timeline, forget_entity, REST, MCP, inspector"),
    Limit("BATCH_SIZE", BATCH_SIZE, "adds per transaction of a verbatim bulk import", "add_many, import, config bulk.batch_size"),
    Limit("BULK_WORKERS", BULK_WORKERS, "scopes imported at once", "add_many, import, config bulk.workers"),
    Limit("REQUEST_DEPTH", REQUEST_DEPTH, "nesting levels of a whole request body / JSON-RPC message", "REST, MCP over HTTP"),
)


def markdown_table() -> str:
    """The limits as the Markdown table docs/python-api.md shows."""
    rows = ["| limit | value | bounds | checked for |", "|---|---:|---|---|"]
    rows += [f"| `{lim.name}` | {lim.value:,} | {lim.bounds} | {lim.where} |" for lim in LIMITS]
    return "\n".join(rows)


#: the doors, as the per-door table names them
DOORS = ("Python API", "CLI", "REST", "MCP")


def door_rules() -> dict[str, tuple[str, str, str, str]]:
    """The rules every door shares, per door (DOORS order): what docs/servers.md shows and
    tests/test_door_rules.py reads back from each running door's own schema."""
    roles = ", ".join(ROLES)
    return {
        "largest `limit` (search, get_all)": (f"{RESULT_LIMIT:,}",) * 4,
        "message roles": (roles, "user (the text given)", roles, roles),
        "metadata nesting": (f"{METADATA_DEPTH}",) * 4,
        "request nesting": ("–", "–", f"{REQUEST_DEPTH}", f"{REQUEST_DEPTH} over HTTP"),
        "types": ("as given (a bool is not a number)", "argparse", "strict JSON; query `true`/`false`, digits", "strict JSON"),
        "refusal": ("`InvalidInputError` (subclasses)", "exit 2, the message", '400 `{"detail", "error"}`', "tool error `Name: detail`"),
    }


def door_table() -> str:
    """The per-door rules as the Markdown table docs/servers.md shows."""
    rows = ["| rule | " + " | ".join(DOORS) + " |", "|---|" + "---|" * len(DOORS)]
    rows += [f"| {rule} | " + " | ".join(cells) + " |" for rule, cells in door_rules().items()]
    return "\n".join(rows)


# --- checks every door shares --------------------------------------------------------------------


def too_long(what: str, size: int, limit: int, unit: str = "characters") -> None:
    """LimitExceededError when ``size`` is over ``limit``: names what, how much and the limit."""
    if size > limit:
        raise LimitExceededError(f"{what} has {size:,} {unit}; the limit is {limit:,}")


def text(what: str, value: str, limit: int) -> str:
    """``value`` within ``limit`` characters and valid Unicode (no lone surrogate: no store can keep one)."""
    too_long(what, len(value), limit)
    return valid_unicode(what, value)


def valid_unicode(what: str, value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(f"{what} holds a lone surrogate character (not valid Unicode text)") from exc
    return value


def json_shape(what: str, value: Any, depth_limit: int, size_limit: int, too_deep: str | None = None) -> None:
    """Refuse a JSON-like value nested deeper than ``depth_limit`` (containers count as levels) or with
    more items than ``size_limit``, walking it without recursion: Python's JSON encoder, ``deepcopy``
    and pydantic's serialiser recurse, so a deep value must be refused before any of them sees it.
    ``too_deep``: the message when it nests too deep (default: names ``depth_limit``)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    seen = 0
    while stack:
        item, depth = stack.pop()
        seen += 1
        if seen > size_limit:  # every item is at least one character of JSON
            raise LimitExceededError(f"{what} has more than {size_limit:,} items; the limit is {size_limit:,} characters of JSON")
        if isinstance(item, Mapping):
            children: Any = item.values()
        elif isinstance(item, (list, tuple)):
            children = item
        else:
            continue
        if depth > depth_limit:
            raise LimitExceededError(too_deep or f"{what} nests deeper than {depth_limit} levels; the limit is {depth_limit}")
        stack.extend((child, depth + 1) for child in children)


def request_depth(body: bytes) -> int:
    """How deep a JSON document nests (``{}`` is 1), counted without parsing it: the brackets outside
    strings (a regular expression drops the strings), then a running sum of +1 / -1 (numpy), all at C
    speed: a megabyte body costs milliseconds. The servers run this before a parser that recurses
    sees the body; malformed JSON is then the parser's to answer."""
    if body.count(b"{") + body.count(b"[") <= REQUEST_DEPTH:  # the everyday case: cannot be too deep
        return 0
    import numpy as np  # the servers' path only

    steps = np.zeros(256, dtype=np.int8)  # a byte's step in depth: an opening bracket +1, a closing one -1
    steps[[ord("{"), ord("[")]], steps[[ord("}"), ord("]")]] = 1, -1
    outside = np.frombuffer(_JSON_STRING.sub(b"", body), dtype=np.uint8)
    return int(np.cumsum(steps[outside], dtype=np.int64).max(initial=0))


_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)  # unrolled: no step per character

def too_deep_request(body: bytes) -> LimitExceededError | None:
    """The refusal of a request nested deeper than REQUEST_DEPTH (naming the depth rules), or None."""
    depth = request_depth(body)
    if depth <= REQUEST_DEPTH:
        return None
    return LimitExceededError(f"the request nests {depth:,} levels deep; the limit is {REQUEST_DEPTH} (metadata may nest "
                              f"{METADATA_DEPTH} levels: METADATA_DEPTH; filters {FILTER_DEPTH} levels of AND/OR/NOT: FILTER_DEPTH)")
