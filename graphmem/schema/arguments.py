"""Checks of the arguments of Memory's reads and corrections (search, get_all, update, timeline),
made before any model or store is asked, with the bounds of graphmem.schema.limits. The add's own
checks are graphmem.ingest.checks and graphmem.ingest.messages."""

from __future__ import annotations

import math
from typing import Any

from graphmem.errors import InvalidInputError
from graphmem.schema import limits
from graphmem.types import clean_text


def check_text(name: str, value: str) -> str:
    """Text that will be stored or sent to a store must be valid Unicode (no lone surrogate)."""
    return limits.valid_unicode(name, value)


def check_limit(limit: Any) -> None:
    """``limit`` of search and get_all: a positive integer up to RESULT_LIMIT, which keeps the store's
    candidate counts (limit × oversampling) far inside 64-bit integers."""
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise InvalidInputError(f"limit must be a positive integer, got {limit!r}")
    if limit > limits.RESULT_LIMIT:
        raise InvalidInputError(f"limit must be at most {limits.RESULT_LIMIT}, got {limit}")


def check_flag(name: str, value: Any) -> bool:
    """A yes/no argument (``infer``, ``include_invalidated``): True or False, nothing taken for one
    ("yes", 1, "false"), as on every door (graphmem.schema.limits.door_rules)."""
    if not isinstance(value, bool):
        raise InvalidInputError(f"{name} must be true or false, got {value!r}")
    return value


def check_listing(limit: Any, include_invalidated: Any) -> None:
    """get_all's ``limit`` and ``include_invalidated``."""
    check_limit(limit)
    check_flag("include_invalidated", include_invalidated)


def check_threshold(threshold: Any) -> float | None:
    if threshold is None:
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold):
        raise InvalidInputError(f"threshold must be a number (a cosine, -1..1) or None, got {threshold!r}")
    return float(threshold)


def check_search(query: Any, hops: Any, limit: Any, threshold: Any) -> tuple[str, float | None]:
    """A search's arguments: the stripped query (empty: nothing to find) and the threshold as a float.
    Its filters are checked by graphmem.schema.filters.parse."""
    if isinstance(hops, bool) or hops not in (1, 2):
        raise InvalidInputError(f"hops must be 1 or 2, got {hops!r}")
    if not isinstance(query, str):
        raise InvalidInputError(f"query must be a string, got {type(query).__name__}")
    check_limit(limit)
    checked = check_threshold(threshold)
    return limits.text("query", query, limits.QUERY_CHARS).strip(), checked


def update_text(data: Any) -> str:
    """The new text of ``update``: a non-empty string within UPDATE_CHARS, cleaned as add() cleans a
    message (NFC, control characters such as NUL removed, trimmed)."""
    if not isinstance(data, str) or not data.strip():
        raise InvalidInputError("update needs non-empty text")
    text = clean_text(limits.text("data", data, limits.UPDATE_CHARS))
    if not text:
        raise InvalidInputError("update needs non-empty text")
    return text


def entity_name(entity: Any) -> str:
    """An entity name asked for (timeline, forget_entity): a non-empty string within ENTITY_CHARS."""
    if not isinstance(entity, str) or not entity.strip():
        raise InvalidInputError("entity must be a non-empty string")
    return limits.text("entity", entity, limits.ENTITY_CHARS)
