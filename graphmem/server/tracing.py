"""REST requests joined to the caller's trace (observability/propagation.py): an ASGI middleware that
starts each request's SERVER span under the ``traceparent`` it carries, with OpenTelemetry's
``http.*`` attributes. The route template names the span (``POST /memories``); the URL's query
string (scope ids, entity names) is not recorded. Outermost, so the access log, the body limit and
every route run inside it; with tracing off it only passes requests on. FastAPI's own request
spans (0.165+) are turned off for it (``fastapi_options``).
"""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from graphmem.observability.propagation import joined
from graphmem.observability.spans import wanted

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from graphmem.config import TracingConfig


def fastapi_options() -> dict[str, Any]:
    """FastAPI's own request spans off (from 0.165 it makes them whenever a tracer provider is set,
    with the query string: scope ids, entity names): TraceRequests makes them instead, under
    graphmem's ``tracing`` switch, on every FastAPI version graphmem supports."""
    from fastapi import FastAPI

    return {"telemetry": {"tracing": False}} if "telemetry" in inspect.signature(FastAPI.__init__).parameters else {}


class TraceRequests:
    """ASGI middleware: a SERVER span per HTTP request, child of the request's ``traceparent``."""

    def __init__(self, app: ASGIApp, settings: TracingConfig) -> None:
        self.app = app
        self.settings = settings

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not wanted(self.settings.enabled):
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers") or []}
        method = scope.get("method", "GET")
        attributes = {"http.request.method": method, "url.path": scope.get("path"), "url.scheme": scope.get("scheme"),
                      "network.protocol.version": scope.get("http_version")}
        with joined(headers, method, attributes, self.settings.enabled, self.settings.include_text) as span:
            status = 500

            async def sending(message: Message) -> None:
                nonlocal status
                if message["type"] == "http.response.start":
                    status = int(message["status"])
                await send(message)

            try:
                await self.app(scope, receive, sending)
            finally:
                route: Any = getattr(scope.get("route"), "path", None)
                if route:
                    span.rename(f"{method} {route}")
                    span.set("http.route", route)
                span.set("http.response.status_code", status)
                if status >= 500:
                    span.error(str(status))
