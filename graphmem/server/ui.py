"""The memory inspector at ``/ui``: a static page (graphmem/ui/) and the few reads and corrections
it needs beyond mem0's routes, under ``/ui/api``, with the REST server's keys and rules.

Every route names a ``user_id`` the key must be bound to (keys.allowed: 400 without one, 403
outside the key's users, whatever exists). A memory addressed by id must belong to that user, else
the answer is the one an unknown id gets (404), so a key learns nothing about another user's ids.
The key travels only in a header; the page keeps it in sessionStorage, never in a URL.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, Query, Response
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

from graphmem.aio import AsyncMemory
from graphmem.errors import InvalidInputError
from graphmem.lifecycle.export import read_graph, to_graphml, to_json
from graphmem.server import owned
from graphmem.server.keys import Caller, allowed
from graphmem.server.models import QueryBool
from graphmem.stores.base import relation_visible
from graphmem.stores.lifecycle import matches, name_pattern
from graphmem.types import Entity, Owners, Relation, Scope, iso, parse_time, utcnow

UI_DIR = Path(__file__).resolve().parent.parent / "ui"
#: The page loads only its own files: no inline script, no other origin, never framed.
HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data: blob:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
    "Referrer-Policy": "no-referrer",
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
}
MAX_ROWS = 10_000
EXPORT_FORMATS = ("json", "graphml")


def mount_inspector(app: FastAPI, memory: AsyncMemory) -> None:
    """Serve the page at /ui, its files at /ui/static, and its API routes (below)."""

    @app.get("/ui", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(UI_DIR / "index.html", headers=HEADERS, media_type="text/html")

    @app.get("/", include_in_schema=False)
    async def root() -> RedirectResponse:  # a person who opens the bare address wants the inspector, not a 404
        return RedirectResponse("/ui", status_code=307)

    app.mount("/ui/static", StaticFiles(directory=UI_DIR), name="ui-static")
    _reads(app, memory)
    _records(app, memory)
    _corrections(app, memory)


def _reads(app: FastAPI, memory: AsyncMemory) -> None:
    @app.get("/ui/api/session", summary="Inspector: who this key is (401 without a valid key)")
    async def session(tenant: Caller) -> dict[str, Any]:
        return {"auth": app.state.tenants is not None, "tenant": tenant.name, "admin": tenant.admin,
                "users": "every user" if tenant.admin else tenant.describe()}

    @app.get("/ui/api/memories", summary="Inspector: a user's memories, with mem0 metadata filters (JSON)")
    async def memories(tenant: Caller, user_id: str | None = None, include_invalidated: QueryBool = False,
                       filters: str | None = None) -> JSONResponse:
        scope = allowed(tenant, user_id, None, None)
        found = await memory.get_all(**scope, include_invalidated=include_invalidated, limit=MAX_ROWS,
                                     filters=_filters(filters))
        return JSONResponse({"results": found["results"]})

    @app.get("/ui/api/graph", summary="Inspector: a user's entities and every relation, marked as holding at as_of")
    async def graph(tenant: Caller, user_id: str | None = None, as_of: str | None = None,
                    known_at: str | None = None) -> JSONResponse:
        scope = Scope.of(**allowed(tenant, user_id, None, None))
        when, known = parse_time(as_of, field_name="as_of"), parse_time(known_at, field_name="known_at")
        entities, relations = await asyncio.to_thread(_scope_graph, memory, scope)
        # a JSONResponse: FastAPI's validation of a dict return doubled the time of a 5,000-entity user
        return JSONResponse({"user_id": user_id, "self": scope.self_name, "as_of": iso(when), "known_at": iso(known),
                             "entities": [_entity_row(e) for e in entities],
                             "relations": [_relation_row(r, when, known) for r in relations]})

    @app.get("/ui/api/entity", summary="Inspector: an entity's timeline and the memories that mention it")
    async def entity(tenant: Caller, name: Annotated[str, Query(min_length=1)],
                     user_id: str | None = None) -> dict[str, Any]:
        scope = allowed(tenant, user_id, None, None)
        timeline = await memory.timeline(name, **scope)
        found = await memory.get_all(**scope, include_invalidated=True, limit=MAX_ROWS)
        pattern = name_pattern(timeline["entity"])
        return {**timeline, "memories": [m for m in found["results"] if matches(pattern, m.get("memory"))]}


def _records(app: FastAPI, memory: AsyncMemory) -> None:
    @app.get("/ui/api/history", summary="Inspector: every change of one of the user's memories")
    async def history(tenant: Caller, memory_id: Annotated[str, Query(min_length=1, max_length=200)],
                      user_id: str | None = None) -> list[dict[str, Any]]:
        allowed(tenant, user_id, None, None)
        return await owned.history(memory, memory_id, Owners(users=(str(user_id),)))

    @app.get("/ui/api/provenance", summary="Inspector: what one add brought (why a relation version is believed)")
    async def provenance(tenant: Caller, add_id: Annotated[str, Query(min_length=1, max_length=200)],
                         user_id: str | None = None) -> dict[str, Any]:
        return await memory.provenance(add_id, **allowed(tenant, user_id, None, None))

    @app.get("/ui/api/export", summary="Inspector: a user's graph (every version) and memories, JSON or GraphML")
    async def export(tenant: Caller, user_id: str | None = None, format: str = "json") -> Response:
        scope = Scope.of(**allowed(tenant, user_id, None, None))
        if format not in EXPORT_FORMATS:
            raise InvalidInputError(f"format must be one of {', '.join(EXPORT_FORMATS)}")
        body, media = await _export(memory, scope, format)
        name = f"graphmem-export.{format}"
        return Response(body, media_type=media, headers={"Content-Disposition": f'attachment; filename="{name}"',
                                                          "Cache-Control": "no-store"})


def _corrections(app: FastAPI, memory: AsyncMemory) -> None:
    @app.delete("/ui/api/memory", summary="Inspector: delete one of the user's memories")
    async def delete_memory(tenant: Caller, memory_id: Annotated[str, Query(min_length=1, max_length=200)],
                            user_id: str | None = None) -> dict[str, Any]:
        allowed(tenant, user_id, None, None)
        await owned.memory(memory, memory_id, Owners(users=(str(user_id),)))  # the page's user only, as an unknown id else
        return await memory.delete(memory_id)

    @app.delete("/ui/api/entity", summary="Inspector: forget an entity (node, relations, memories mentioning it)")
    async def forget_entity(tenant: Caller, name: Annotated[str, Query(min_length=1)],
                            user_id: str | None = None) -> dict[str, Any]:
        return await memory.forget_entity(name, **allowed(tenant, user_id, None, None))

    @app.delete("/ui/api/user", summary="Inspector: forget everything of the user")
    async def forget_user(tenant: Caller, user_id: str | None = None) -> dict[str, Any]:
        return await memory.forget(**allowed(tenant, user_id, None, None))


def _filters(text: str | None) -> dict[str, Any] | None:
    """The page sends metadata filters as one JSON query parameter."""
    if text is None or not text.strip():
        return None
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise InvalidInputError(f"filters must be a JSON object: {exc}") from exc
    if not isinstance(value, dict):
        raise InvalidInputError("filters must be a JSON object")
    return value


def _scope_graph(memory: AsyncMemory, scope: Scope) -> tuple[list[Entity], list[Relation]]:
    store = memory.sync.store
    return store.entities(scope), store.get_all(scope, include_invalidated=True)


def _entity_row(entity: Entity) -> dict[str, Any]:
    return {"id": entity.id, "name": entity.name, "entity_type": entity.entity_type, "mentions": entity.mentions,
            "created_at": iso(entity.created_at), "updated_at": iso(entity.updated_at)}


def _relation_row(relation: Relation, as_of: Any, known_at: Any) -> dict[str, Any]:
    """A relation version with its endpoint ids and whether it holds at ``as_of`` as known at ``known_at``."""
    holds = relation_visible(relation.valid_at, relation.invalid_at, relation.created_at, relation.expired_at,
                             as_of, known_at, utcnow())
    return {**relation.to_dict(), "source_id": relation.source_id, "destination_id": relation.destination_id,
            "holds": holds}


async def _export(memory: AsyncMemory, scope: Scope, format: str) -> tuple[str, str]:
    """``graphmem export``'s documents (every relation version and the memories), so `graphmem load` reads them."""
    graph = await asyncio.to_thread(read_graph, memory.sync.store, scope, True)
    if format == "graphml":
        return to_graphml(graph), "application/graphml+xml"
    return to_json(graph), "application/json"
