"""A request body size limit as plain ASGI middleware: 413 with a JSON body, before any route runs;
and the depth guard (graphmem.schema.limits.REQUEST_DEPTH): a body nested deeper is refused with
LimitExceededError (400) naming the depth rules before FastAPI's parser, which recurses, reads it."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

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
        chunks: list[bytes] = []
        size, more = 0, True
        while more:  # read the (bounded) body first, so a chunked upload cannot exceed the limit either
            message = await receive()
            if message["type"] != "http.request":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.limit:
                await self._refuse(send)
                return
            chunks.append(chunk)
            more = message.get("more_body", False)
        body = b"".join(chunks)
        too_deep = limits.too_deep_request(body)  # before a parser that recurses reads it (a bare 400 otherwise)
        if too_deep is not None:
            await _answer(send, 400, {"detail": str(too_deep), "error": type(too_deep).__name__})
            return
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)

    async def _refuse(self, send: Send) -> None:
        await _answer(send, 413, {"detail": f"request body larger than {self.limit} bytes", "error": "PayloadTooLarge"})


async def _answer(send: Send, status: int, body: dict[str, str]) -> None:
    payload = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]})
    await send({"type": "http.response.body", "body": payload})
