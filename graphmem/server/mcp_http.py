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
import re
from typing import TYPE_CHECKING, Any

from graphmem.schema import limits
from graphmem.server.access import Tenants, key_of
from graphmem.server.limits import answer_json, read_body, replaying

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
    await answer_json(send, 401, {"error": "Unauthorized", "detail": UNAUTHORIZED}, [(b"www-authenticate", b"Bearer")])


class DepthGuard:
    """ASGI middleware: a JSON-RPC message nested deeper than REQUEST_DEPTH (graphmem.schema.limits) is
    answered by graphmem, before the SDK's parser (which recurses, and would answer a bare parse error):
    a tool call gets the tool error every door gives, ``LimitExceededError: ...`` naming the depth
    rules; any other request a JSON-RPC invalid-params error with that text."""

    def __init__(self, app: ASGIApp, path: str = "/mcp") -> None:
        self.app = app
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST" or not scope.get("path", "").startswith(self.path):
            await self.app(scope, receive, send)
            return
        body = await read_body(receive) or b""
        refusal = limits.too_deep_request(body)
        if refusal is not None:
            await answer_json(send, 200, _refused(body, f"{type(refusal).__name__}: {refusal}"))
            return
        await self.app(scope, replaying(body, receive), send)


def _refused(body: bytes, text: str) -> dict[str, Any]:
    """The JSON-RPC answer to a request refused whole: its id, method and tool are read from the request
    with everything deeper than its arguments left out (shallow), so no parser recursion is needed."""
    try:
        request = json.loads(shallow(body, 3))
    except ValueError:
        request = None
    request = request if isinstance(request, dict) else {}
    answer: dict[str, Any] = {"jsonrpc": "2.0", "id": request.get("id")}
    if request.get("method") == "tools/call":
        answer["result"] = {"content": [{"type": "text", "text": text}], "isError": True}
    else:
        answer["error"] = {"code": -32602, "message": text}
    return answer


_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


def shallow(body: bytes, keep: int) -> bytes:
    """``body`` (JSON) with every container deeper than ``keep`` levels replaced by null."""
    out: list[bytes] = []
    depth, start = 0, 0
    for token in _TOKEN.finditer(body):
        bracket = token.group()
        if bracket in (b"{", b"["):
            depth += 1
            if depth == keep + 1:
                out += [body[start:token.start()], b"null"]
        elif bracket in (b"}", b"]"):
            depth -= 1
            if depth == keep:
                start = token.end()
    out.append(body[start:] if depth <= keep else b"")
    return b"".join(out)


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

    app: Any = DepthGuard(server.streamable_http_app(streamable_http_path="/mcp", host=host))
    if tenants is not None:
        app = KeyGate(app, tenants)  # outside: a request without a key is refused before its body is read
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False)
