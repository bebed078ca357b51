"""Views both servers offer that are built from Memory's public results."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from graphmem.aio import AsyncMemory
from graphmem.errors import GraphMemError
from graphmem.stores.base import relation_visible
from graphmem.types import parse_time, utcnow

#: both servers' access log: one INFO line per REST request (manners.AccessLog) or MCP tool call
ACCESS = logging.getLogger("graphmem.server.access")
R = TypeVar("R", bound=Mapping[str, Any])


def neighbourhood(timeline: dict[str, Any], as_of: str | None = None, known_at: str | None = None) -> dict[str, Any]:
    """The relations touching an entity that hold at ``as_of`` (default now) as graphmem knew them at
    ``known_at`` (default now): the timeline filtered by the store's one time rule."""
    return {"entity": timeline["entity"], "relations": holding(timeline["relations"], as_of, known_at)}


def holding(relations: Sequence[R], as_of: str | None = None, known_at: str | None = None) -> list[R]:
    """The relation versions that hold at ``as_of`` as known at ``known_at`` (both default now); a
    time that is not ISO-8601 is an InvalidInputError naming its parameter."""
    when = parse_time(as_of, field_name="as_of")
    known = parse_time(known_at, field_name="known_at")
    now = utcnow()
    return [
        r for r in relations
        if relation_visible(parse_time(r["valid_at"]), parse_time(r["invalid_at"]), parse_time(r["created_at"]),
                            parse_time(r["expired_at"]), when, known, now)
    ]


async def health(memory: AsyncMemory) -> tuple[dict[str, str], int]:
    """GET /health of both servers: the body and status. The store is asked once, without the
    driver's retries (GraphStore.ping), so a load balancer's check gets a prompt answer: 200, or
    503 naming the error's kind (never its text: the check needs no key)."""
    from graphmem import __version__

    try:
        await asyncio.to_thread(memory.sync.store.ping)
    except GraphMemError as exc:
        return {"status": "unavailable", "store": f"unreachable: {type(exc).__name__}", "version": __version__}, 503
    return {"status": "ok", "store": "reachable", "version": __version__}, 200
