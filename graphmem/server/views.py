"""Views both servers offer that are built from Memory's public results."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from graphmem.aio import AsyncMemory
from graphmem.errors import (
    AccessDeniedError,
    EmbeddingError,
    GraphMemError,
    InvalidInputError,
    LLMError,
    NotFoundError,
    StorageFullError,
    StoreError,
    StoreUnavailableError,
    WriteOutcomeUnknown,
)
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


#: how long /health waits for the store before it answers 503 (a load balancer's check is short)
HEALTH_WAIT = 1.0


class HealthProbe:
    """GET /health of both servers. The store is asked once, without the driver's retries
    (GraphStore.ping), and waited for at most HEALTH_WAIT seconds: a store that does not answer (Neo4j
    starting, a stalled link) gets 503 at once, not when the driver gives up. One ping at a time: a
    check that comes while one is still running waits for that one. The body names the error's kind,
    never its text (the check needs no key)."""

    def __init__(self, memory: AsyncMemory, wait: float = HEALTH_WAIT) -> None:
        self.memory = memory
        self.wait = wait
        self._pending: asyncio.Future[None] | None = None

    async def check(self) -> tuple[dict[str, str], int]:
        from graphmem import __version__

        if self._pending is None or self._pending.done():
            self._pending = asyncio.ensure_future(asyncio.to_thread(self.memory.sync.store.ping))
            self._pending.add_done_callback(_retrieved)
        try:
            await asyncio.wait_for(asyncio.shield(self._pending), self.wait)
        except asyncio.TimeoutError:
            return {"status": "unavailable", "store": f"no answer within {self.wait:g} s", "version": __version__}, 503
        except Exception as exc:  # noqa: BLE001 - any failure of the ping is an unavailable store
            return {"status": "unavailable", "store": f"unreachable: {type(exc).__name__}", "version": __version__}, 503
        return {"status": "ok", "store": "reachable", "version": __version__}, 200


def _retrieved(future: asyncio.Future[None]) -> None:
    """Read a finished ping's outcome, so one nobody waited for does not log "never retrieved"."""
    if not future.cancelled():
        future.exception()


def public_detail(exc: GraphMemError) -> str:
    """What an error answer may say. The caller's own mistakes are told in full; a failure of the
    server's parts (LLM, embedder, store, disk) names what failed, not its message, which holds
    internal addresses (bolt and LLM URLs, file paths): those go to the server log only."""
    if isinstance(exc, (InvalidInputError, NotFoundError, AccessDeniedError)):
        return str(exc)
    if isinstance(exc, WriteOutcomeUnknown):
        return _outcome_unknown(exc)
    for kind, says in _SERVER_SIDE:
        if isinstance(exc, kind):
            return f"{says} ({type(exc).__name__}); the server log has the details"
    return f"the request failed ({type(exc).__name__}); the server log has the details"


def _outcome_unknown(exc: WriteOutcomeUnknown) -> str:
    """WriteOutcomeUnknown's answer: which write, and how to find out (its text without the store's address)."""
    ids = f" (memory ids: {', '.join(exc.memory_ids)})" if exc.memory_ids else ""
    how = (f"retry with the same idempotency key {exc.idempotency_key!r}: it returns the first outcome if the write "
           "happened, and writes it once if not" if exc.idempotency_key is not None else
           "retrying without an idempotency key may store it twice; check the memories or their history")
    return f"the store's connection failed while write {exc.add_id}{ids} was committing; whether it happened is unknown: {how}"


_SERVER_SIDE: tuple[tuple[type[GraphMemError], str], ...] = (
    (LLMError, "the LLM could not be used"),
    (EmbeddingError, "the embedder failed"),
    (StorageFullError, "the disk holding the memory store is full: nothing was written; deleting and forgetting memories still work"),
    (StoreUnavailableError, "the graph store cannot be reached"),
    (StoreError, "the graph store failed"),
)


#: the error name an HTTP refusal raised below graphmem (the key check, routing) answers with
HTTP_ERRORS = {400: "InvalidInputError", 401: "Unauthorized", 403: "AccessDeniedError", 404: "NotFoundError",
               405: "MethodNotAllowed", 413: "PayloadTooLarge"}


def invalid_request(problems: Sequence[Any]) -> str:
    """pydantic's validation problems as one sentence naming each field: ``"body.limit: ...; ..."``."""
    said = []
    for problem in problems:
        where = ".".join(str(part) for part in problem.get("loc", ()))
        said.append(f"{where}: {problem.get('msg')}" if where else str(problem.get("msg")))
    return "; ".join(said) or "invalid request"
