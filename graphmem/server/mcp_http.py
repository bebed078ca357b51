"""``graphmem mcp --http``: the MCP server over streamable HTTP, with the REST server's tenant keys.

A request to ``/mcp`` must carry a key of the keys file (``Authorization: Bearer <key>``, ``Token
<key>`` or ``X-API-Key``), the same file and rules as ``graphmem serve --keys``: without one, or with
an unknown one, the answer is 401 before the MCP session sees the request. Each tool call then checks
the key against the scope it names (mcp.py: a key reaches only its users; an admin key every user).
``/health`` needs no key, as on the REST server. ``--no-auth`` serves without keys.
"""

from __future__ import annotations

import ipaddress
import json
from typing import TYPE_CHECKING, Any

from graphmem.server.access import Tenants, key_of

if TYPE_CHECKING:  # the ASGI types (starlette comes with the mcp extra)
    from starlette.types import ASGIApp, Receive, Scope, Send

UNAUTHORIZED = "a valid API key is required (Authorization: Bearer <key>, or X-API-Key)"


class KeyGate:
    """ASGI middleware: 401 for a request to the MCP endpoint without a valid key."""

    def __init__(self, app: ASGIApp, tenants: Tenants, path: str = "/mcp") -> None:
        self.app = app
        self.tenants = tenants
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope.get("path", "").startswith(self.path):
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
            if self.tenants.find(key_of(headers)) is None:
                await _refuse(send)
                return
        await self.app(scope, receive, send)


async def _refuse(send: Send) -> None:
    body = json.dumps({"error": "Unauthorized", "detail": UNAUTHORIZED}).encode()
    await send({"type": "http.response.start", "status": 401,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"www-authenticate", b"Bearer")]})
    await send({"type": "http.response.body", "body": body})


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def run(server: Any, tenants: Tenants | None, host: str, port: int) -> None:
    """Serve ``server`` (an MCPServer) at http://host:port/mcp, behind the key gate when keys are given."""
    import uvicorn

    app: Any = server.streamable_http_app(streamable_http_path="/mcp", host=host)
    if tenants is not None:
        app = KeyGate(app, tenants)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
