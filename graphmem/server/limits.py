"""A request body size limit as plain ASGI middleware: 413 with a JSON body, before any route runs;
and the depth guard (graphmem.schema.limits.REQUEST_DEPTH): a body nested deeper is refused with
LimitExceededError (400) naming the depth rules before FastAPI's parser, which recurses, reads it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from graphmem.schema import limits

if TYPE_CHECKING:  # the ASGI types (starlette comes with the server extra's FastAPI)
    from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodyLimit:
    def __init__(self, app: ASGIApp, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.limit):
            await self._refuse(send)
            return
        body = await read_body(receive, self.limit)
        if body is None:
            await self._refuse(send)
            return
        too_deep = limits.too_deep_request(body)  # before a parser that recurses reads it (a bare 400 otherwise)
        if too_deep is not None:
            await answer_json(send, 400, {"detail": str(too_deep), "error": type(too_deep).__name__})
            return
        await self.app(scope, replaying(body, receive), send)

    async def _refuse(self, send: Send) -> None:
        await answer_json(send, 413, {"detail": f"request body larger than {self.limit} bytes", "error": "PayloadTooLarge"})


async def read_body(receive: Receive, limit: int | None = None) -> bytes | None:
    """The whole request body, read before any route or parser sees it (a chunked upload too);
    None once it grows past ``limit`` bytes."""
    chunks: list[bytes] = []
    size, more = 0, True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            break
        chunk = message.get("body", b"")
        size += len(chunk)
        if limit is not None and size > limit:
            return None
        chunks.append(chunk)
        more = message.get("more_body", False)
    return b"".join(chunks)


def replaying(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app the body already read, then the connection's own messages
    (a disconnect)."""
    replayed = False

    async def replay() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def answer_json(send: Send, status: int, body: dict[str, Any], headers: list[tuple[bytes, bytes]] | None = None) -> None:
    payload = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode()),
                            *(headers or [])]})
    await send({"type": "http.response.body", "body": payload})
