"""REST requests joined to the caller's trace (observability/propagation.py): an ASGI middleware that
starts each request's SERVER span under the ``traceparent`` it carries, with OpenTelemetry's
``http.*`` attributes. The route template names the span (``POST /memories``); the URL's query
string (scope ids, entity names) is not recorded. Outermost, so the access log, the body limit and
every route run inside it; with tracing off it only passes requests on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphmem.observability.propagation import joined
from graphmem.observability.spans import wanted

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Message, Receive, Scope, Send

    from graphmem.config import TracingConfig


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
