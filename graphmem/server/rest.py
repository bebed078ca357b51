"""``graphmem serve``: mem0's REST routes over the one engine (AsyncMemory), with tenant API keys.

Routes (mem0's, so mem0 REST clients work): POST /memories, GET /memories, GET/PUT/DELETE
/memories/{id}, GET /memories/{id}/history, POST /search, DELETE /memories, POST /reset; and
graphmem's GET /timeline, GET /graph and GET /provenance/{add_id}; GET /health. OpenAPI at /docs (Swagger UI from the package). Bodies are pydantic models that refuse
unknown fields and take strict types (models.py); every error, whatever layer refuses (graphmem, FastAPI's
validation, routing, the key check), is a JSON body {"detail": str, "error": name} with a 4xx status (5xx
only when the LLM or the store failed, without a traceback). Keys: access.py; by id: owned.py.
"""

from __future__ import annotations

import logging
from typing import Annotated, Any

from fastapi import FastAPI, Header, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from graphmem.aio import AsyncMemory
from graphmem.errors import (
    AccessDeniedError,
    EmbeddingError,
    GraphMemError,
    IdempotencyConflictError,
    InvalidInputError,
    LLMError,
    NotFoundError,
    StorageFullError,
    StoreUnavailableError,
)
from graphmem.results import MemoryResult, SearchResult
from graphmem.schema.arguments import check_limit
from graphmem.server import manners, owned
from graphmem.server.access import Tenants
from graphmem.server.keys import Caller, allowed
from graphmem.server.limits import BodyLimit
from graphmem.server.models import LIMIT_SCHEMA, MemoryCreate, MemoryUpdate, QueryBool, QueryInt, SearchRequest
from graphmem.server.tracing import TraceRequests, fastapi_options
from graphmem.server.ui import mount_inspector
from graphmem.server.views import HTTP_ERRORS, holding, invalid_request, neighbourhood, public_detail

log = logging.getLogger(__name__)

DEFAULT_MAX_BODY = 1_000_000


def create_app(memory: AsyncMemory, tenants: Tenants | None, *, max_body: int = DEFAULT_MAX_BODY) -> FastAPI:
    """The REST app; ``tenants=None`` serves without keys (every caller is admin)."""
    app = FastAPI(title="graphmem", description="Knowledge-graph memory for LLM agents (mem0-compatible REST).",
                  version="1", docs_url=None, redoc_url=None, **fastapi_options())
    _errors(app)
    manners.install(app, memory)  # /docs from the package, /health, the access log
    app.add_middleware(BodyLimit, limit=max_body)
    app.add_middleware(TraceRequests, settings=memory.sync.config.tracing)  # added last: outermost
    app.state.tenants = tenants
    _memory_routes(app, memory)
    _search_route(app, memory)
    _reset_route(app, memory)
    _graph_routes(app, memory)

    mount_inspector(app, memory)
    return app


def _memory_routes(app: FastAPI, memory: AsyncMemory) -> None:
    """mem0's memory routes: add, list, read, update and delete, one memory's history, a scope's deletion."""

    @app.post("/memories", summary="Remember messages for a scope")
    async def add(body: MemoryCreate, tenant: Caller,
                  idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None) -> dict[str, Any]:
        scope = allowed(tenant, body.user_id, body.agent_id, body.run_id)
        messages = [m.model_dump() for m in body.messages]
        return await memory.add(messages, **scope, metadata=body.metadata, infer=body.infer, timestamp=body.timestamp,
                                idempotency_key=idempotency_key)

    @app.get("/memories", summary="A scope's memories and relations", response_model=dict[str, Any])
    async def get_all(tenant: Caller, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                      include_invalidated: QueryBool = False,
                      limit: Annotated[QueryInt, Query(json_schema_extra=LIMIT_SCHEMA)] = 100) -> SearchResult:
        scope = allowed(tenant, user_id, agent_id, run_id)
        return await memory.get_all(**scope, include_invalidated=include_invalidated, limit=limit)

    @app.get("/memories/{memory_id}", summary="One memory by id", response_model=dict[str, Any])
    async def get_one(memory_id: str, tenant: Caller) -> MemoryResult:
        return await owned.memory(memory, memory_id, tenant.owners())

    @app.put("/memories/{memory_id}", summary="Replace a memory's text")
    async def update(memory_id: str, body: MemoryUpdate, tenant: Caller) -> dict[str, Any]:
        await owned.memory(memory, memory_id, tenant.owners())
        return await memory.update(memory_id, body.new_text())

    @app.delete("/memories/{memory_id}", summary="Delete one memory")
    async def delete(memory_id: str, tenant: Caller) -> dict[str, Any]:
        await owned.memory(memory, memory_id, tenant.owners())
        return await memory.delete(memory_id)

    @app.get("/memories/{memory_id}/history", summary="Every change of a memory")
    async def history(memory_id: str, tenant: Caller) -> list[dict[str, Any]]:
        return await owned.history(memory, memory_id, tenant.owners())  # another tenant's id: as an unknown one

    @app.delete("/memories", summary="Delete everything of a scope")
    async def delete_all(tenant: Caller, user_id: str | None = None, agent_id: str | None = None,
                         run_id: str | None = None) -> dict[str, Any]:
        return await memory.delete_all(**allowed(tenant, user_id, agent_id, run_id))


def _search_route(app: FastAPI, memory: AsyncMemory) -> None:
    """mem0's search: the caller's scope only."""

    @app.post("/search", summary="Memories and relations relevant to a query (no LLM call)", response_model=dict[str, Any])
    async def search(body: SearchRequest, tenant: Caller) -> SearchResult:
        scope = allowed(tenant, body.user_id, body.agent_id, body.run_id)
        return await memory.search(body.query, **scope, limit=body.limit, filters=body.filters, threshold=body.threshold,
                                   as_of=body.as_of, known_at=body.known_at)


def _reset_route(app: FastAPI, memory: AsyncMemory) -> None:
    """mem0's reset, refused to any key but an admin's."""

    @app.post("/reset", summary="Delete everything of every scope (admin key)")
    async def reset(tenant: Caller) -> dict[str, str]:
        if not tenant.admin:
            raise AccessDeniedError("/reset needs an admin key")
        await memory.reset()
        return {"message": "Memory reset successfully!"}


def _graph_routes(app: FastAPI, memory: AsyncMemory) -> None:
    """graphmem's own views of the graph: an entity's timeline, a scope's relations or one neighbourhood."""

    @app.get("/timeline", summary="Every version of the relations of an entity")
    async def timeline(tenant: Caller, entity: str, user_id: str | None = None, agent_id: str | None = None,
                       run_id: str | None = None) -> dict[str, Any]:
        return await memory.timeline(entity, **allowed(tenant, user_id, agent_id, run_id))

    @app.get("/graph", summary="A scope's relations, or one entity's neighbourhood at a time")
    async def graph(tenant: Caller, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                    entity: str | None = None, as_of: str | None = None, known_at: str | None = None,
                    include_invalidated: QueryBool = False,
                    limit: Annotated[QueryInt, Query(json_schema_extra=LIMIT_SCHEMA)] = 100) -> dict[str, Any]:
        scope = allowed(tenant, user_id, agent_id, run_id)
        check_limit(limit)  # the table's bound, also where the store is read with its own
        if entity is not None:
            return neighbourhood(await memory.timeline(entity, **scope), as_of, known_at)
        if as_of is None and known_at is None:
            found = await memory.get_all(**scope, include_invalidated=include_invalidated, limit=limit)
            return {"relations": found["relations"]}
        holding([], as_of, known_at)  # a bad time is refused before the store is read
        every = await memory.get_all(**scope, include_invalidated=True, limit=10_000)  # every version, then the time rule
        return {"relations": holding(every["relations"], as_of, known_at)[:limit]}

    @app.get("/provenance/{add_id}", summary="What one add brought: why a relation is believed")
    async def provenance(add_id: str, tenant: Caller, user_id: str | None = None, agent_id: str | None = None,
                         run_id: str | None = None) -> dict[str, Any]:
        # another tenant's add reads as one that brought nothing (the scope is the key's), as an unknown id
        return await memory.provenance(add_id, **allowed(tenant, user_id, agent_id, run_id))


_STATUS: tuple[tuple[type[GraphMemError], int], ...] = (
    (IdempotencyConflictError, 422),  # the IETF Idempotency-Key draft's answer to a reused key with another payload
    (InvalidInputError, 400),
    (NotFoundError, 404),
    (AccessDeniedError, 403),
    (LLMError, 502),
    (EmbeddingError, 502),
    (StoreUnavailableError, 503),
    (StorageFullError, 507),
)


def _errors(app: FastAPI) -> None:
    @app.exception_handler(GraphMemError)
    async def graphmem_error(request: Request, exc: GraphMemError) -> JSONResponse:
        status = next((code for kind, code in _STATUS if isinstance(exc, kind)), 500)
        if status >= 500:
            log.warning("%s %s failed: %s: %s", request.method, request.url.path, type(exc).__name__, exc)
        return JSONResponse({"detail": public_detail(exc), "error": type(exc).__name__}, status_code=status)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        # a refusal by FastAPI's own checks is answered as the core's refusals are: one shape on every layer
        return JSONResponse({"detail": invalid_request(exc.errors()), "error": "InvalidInputError"}, status_code=400)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"detail": exc.detail, "error": HTTP_ERRORS.get(exc.status_code, "HTTPError")},
                            status_code=exc.status_code, headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.error("%s %s failed unexpectedly: %s", request.method, request.url.path, type(exc).__name__)
        return JSONResponse({"detail": "internal error", "error": type(exc).__name__}, status_code=500)
