"""What a server owes the person who starts it: /docs served from the package (no CDN, works
offline), /health (the store reachable, the version), gzipped answers, an access log at INFO that
names a request's key by its name (never the key), and the API-key security schemes in the OpenAPI
schema, so Swagger's "Authorize" button can send a key.

Swagger UI is vendored from npm's swagger-ui-dist under ``static/swagger-ui`` (its LICENSE beside it).
"""

from __future__ import annotations

import time
from pathlib import Path

from fastapi import FastAPI, Request, Response
from fastapi.middleware.gzip import GZipMiddleware
from fastapi.openapi.docs import get_swagger_ui_html
from fastapi.responses import HTMLResponse, JSONResponse
from fastapi.security import APIKeyHeader, HTTPBearer
from fastapi.staticfiles import StaticFiles
from starlette.middleware.base import BaseHTTPMiddleware, RequestResponseEndpoint

from graphmem.aio import AsyncMemory
from graphmem.server import views
from graphmem.server.views import ACCESS

STATIC = Path(__file__).parent / "static"

#: The two ways a key may travel, declared in the OpenAPI schema (the server also accepts "Token <key>").
API_KEY_HEADER = APIKeyHeader(name="X-API-Key", auto_error=False, scheme_name="ApiKey",
                              description="A tenant key from the keys file (graphmem serve --keys).")
BEARER = HTTPBearer(auto_error=False, scheme_name="Bearer",
                    description="The same key as `Authorization: Bearer <key>` (or `Token <key>`).")


def install(app: FastAPI, memory: AsyncMemory) -> None:
    """Add /docs, /health, gzip and the access log to the REST app (create it with docs_url=None)."""
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    probe = views.HealthProbe(memory)
    # Bodies of 1 KB or more are gzipped for clients that accept it: the inspector's graph of a
    # 5,000-entity user is 4.1 MB as JSON, 0.7 MB gzipped. Keys travel in headers, never cookies, so
    # a page of another site cannot make compressed answers carry them. Added before the access log,
    # so it sits inside it and sees each answer whole (the log streams what it passes on).
    app.add_middleware(GZipMiddleware, minimum_size=1000, compresslevel=6)  # 9: 2.7x the time, 1% smaller
    app.add_middleware(AccessLog)

    @app.get("/docs", include_in_schema=False)
    async def docs() -> HTMLResponse:
        return get_swagger_ui_html(openapi_url=app.openapi_url or "/openapi.json", title="graphmem REST API",
                                   swagger_js_url="/static/swagger-ui/swagger-ui-bundle.js",
                                   swagger_css_url="/static/swagger-ui/swagger-ui.css",
                                   swagger_favicon_url="/static/swagger-ui/favicon-32x32.png")

    @app.get("/health", summary="Whether the server and its store answer (no key needed)", tags=["health"])
    async def health() -> JSONResponse:
        body, status = await probe.check()
        return JSONResponse(body, status_code=status)


class AccessLog(BaseHTTPMiddleware):
    """One INFO line per request: method, path, status, milliseconds and the key's name (or "-")."""

    async def dispatch(self, request: Request, call_next: RequestResponseEndpoint) -> Response:
        started = time.perf_counter()
        status = 500
        try:
            response = await call_next(request)
            status = response.status_code
            return response
        finally:
            key = getattr(request.state, "key_name", None) or "-"
            ACCESS.info("%s %s %d %.1fms key=%s", request.method, request.url.path, status,
                        (time.perf_counter() - started) * 1000, key)

