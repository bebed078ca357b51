"""Views both servers offer that are built from Memory's public results."""

from __future__ import annotations

from typing import Any

from graphmem.stores.base import relation_visible
from graphmem.types import parse_time, utcnow


def neighbourhood(timeline: dict[str, Any], as_of: str | None = None, known_at: str | None = None) -> dict[str, Any]:
    """The relations touching an entity that hold at ``as_of`` (default now) as graphmem knew them at
    ``known_at`` (default now): the timeline filtered by the store's one time rule."""
    when = parse_time(as_of, field_name="as_of")
    known = parse_time(known_at, field_name="known_at")
    now = utcnow()
    current = [
        r for r in timeline["relations"]
        if relation_visible(parse_time(r["valid_at"]), parse_time(r["invalid_at"]), parse_time(r["created_at"]),
                            parse_time(r["expired_at"]), when, known, now)
    ]
    return {"entity": timeline["entity"], "relations": current}
