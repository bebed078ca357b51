"""A local, scripted, OpenAI-compatible chat-completions server.

It is the only LLM test double of the graphmem test-suite: the library talks to
it with the real ``openai`` SDK over HTTP, exactly as it would talk to a real
provider.  ``graphmem demo`` also uses it when no real LLM is configured.

Only the standard library is used.

Example::

    with ScriptedLLMServer() as server:
        server.enqueue("extract_entities", {"entities": [{"name": "alice", "type": "person"}]})
        client = openai.OpenAI(base_url=server.base_url, api_key="test")
        ...

Reply resolution for one request whose tool is ``T`` (the tool named by
``tool_choice``, else the first entry of ``tools``):

1. an injected fault matching ``T`` (or injected for any tool), oldest first;
2. the next reply scripted for ``T`` with :meth:`ScriptedLLMServer.enqueue` (FIFO per tool);
3. the handler set with :meth:`ScriptedLLMServer.set_handler`, if it returns non-``None``;
4. the default empty reply of ``T`` (see :data:`DEFAULT_REPLIES`); counted in ``unscripted``.

``latency`` delays every chat completion (a model's think time, for benchmarks). ``/v1/embeddings``
answers with deterministic vectors (:func:`hashed_vectors`, or the ``embedder`` given), counted in
``embedding_calls``; embedding requests are not recorded in ``requests``.
"""

from __future__ import annotations

import enum
import hashlib
import itertools
import json
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from graphmem.testing.replies import DEFAULT_REPLIES

if TYPE_CHECKING:
    from graphmem.testing.providers import ProviderProfile

__all__ = [
    "DEFAULT_REPLIES",
    "Fault",
    "RecordedRequest",
    "Reply",
    "ScriptedLLMServer",
]

# A reply: arguments of one tool call (dict), several tool calls of the same
# tool (list of dicts / raw strings), or a raw arguments string (sent verbatim).
Reply = dict[str, Any] | list[Any] | str
Handler = Callable[[str | None, dict[str, Any]], Reply | None]

#: the embedding size of OpenAI's models, answered when a request names one without ``dimensions``
_MODEL_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}

MALFORMED_ARGUMENTS = '{"entities": ['
UNKNOWN_TOOL_NAME = "not_a_tool"
NO_TOOL_CALL_TEXT = "I am sorry, I cannot call a tool right now."
BAD_JSON_BODY = b'{"id": "chatcmpl-broken", "choices": [ <<this is not json>>'


class Fault(str, enum.Enum):
    """Faults that can be injected with :meth:`ScriptedLLMServer.inject`."""

    RATE_LIMIT = "rate_limit"  # HTTP 429, OpenAI-style error, ``retry-after: 0``
    SERVER_ERROR = "server_error"  # HTTP 500, OpenAI-style error
    TIMEOUT = "timeout"  # sleep ``delay`` seconds, then answer normally
    MALFORMED = "malformed"  # 200, tool-call arguments are not JSON
    UNKNOWN_TOOL = "unknown_tool"  # 200, tool call named "not_a_tool"
    NO_TOOL_CALL = "no_tool_call"  # 200, plain assistant text, no tool_calls
    BAD_JSON_BODY = "bad_json_body"  # 200, HTTP body is not JSON

    def __str__(self) -> str:  # "rate_limit" rather than "Fault.RATE_LIMIT"
        return self.value


@dataclass
class RecordedRequest:
    """One request received by the server (faulted requests included)."""

    tool: str | None
    body: dict[str, Any]
    path: str = "/v1/chat/completions"
    tools: tuple[str, ...] = ()  # every tool the request offered (several when tool_choice is "required")
    timestamp: float = field(default_factory=time.time)
    fault: Fault | None = None  # the fault applied to this request, if any
    refused: str | None = None  # what the provider profile refused in it (e.g. "max_tokens", "tools")

    @property
    def messages(self) -> list[Any]:
        return list(self.body.get("messages") or [])

    @property
    def model(self) -> str | None:
        return self.body.get("model")


@dataclass
class _FaultEntry:
    fault: Fault
    remaining: int
    tool: str | None
    delay: float


def _tool_of(body: dict[str, Any]) -> str | None:
    """The tool a request asks for: tool_choice's function, else the first tool."""
    choice = body.get("tool_choice")
    if isinstance(choice, dict):
        fn = choice.get("function")
        name = fn.get("name") if isinstance(fn, dict) else None
        if isinstance(name, str):
            return name
    tools = body.get("tools")
    if isinstance(tools, list) and tools:
        first = tools[0]
        if isinstance(first, dict):
            fn = first.get("function")
            name = fn.get("name") if isinstance(fn, dict) else None
            if isinstance(name, str):
                return name
    return None


def _tools_of(body: dict[str, Any]) -> list[str]:
    """The tools a request wants answered: the forced one, or every offered tool otherwise.

    graphmem offers several tools with tool_choice="required" when one answer should call each of
    them (entities and relations in one request); the server then answers each offered tool from
    its own queue. An empty list reply (``[]``) for a tool means "the model did not call it".
    """
    choice = body.get("tool_choice")
    forced = _tool_of(body) if isinstance(choice, dict) else None
    if forced:
        return [forced]
    names = []
    for entry in body.get("tools") or []:
        fn = entry.get("function") if isinstance(entry, dict) else None
        if isinstance(fn, dict) and isinstance(fn.get("name"), str):
            names.append(fn["name"])
    return names


def _content_length(content: Any) -> int:
    if isinstance(content, str):
        return len(content)
    if isinstance(content, list):  # content parts
        total = 0
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                total += len(part["text"])
            elif isinstance(part, str):
                total += len(part)
        return total
    return 0


def _prompt_tokens(body: dict[str, Any]) -> int:
    messages = body.get("messages")
    if not isinstance(messages, list):
        return 0
    return sum(_content_length(m.get("content")) for m in messages if isinstance(m, dict)) // 4


def _validate_reply(reply: Any) -> None:
    if isinstance(reply, (dict, str)):
        return
    if isinstance(reply, list):
        for item in reply:
            if not isinstance(item, (dict, str)):
                raise TypeError(
                    f"list replies must contain dicts or str, got {type(item).__name__}"
                )
        return
    raise TypeError(
        f"a reply must be a dict, a list of dicts or a str, got {type(reply).__name__}"
    )


def _arguments_list(reply: Reply) -> list[str]:
    """Arguments strings of the tool calls of one reply."""
    items = reply if isinstance(reply, list) else [reply]
    return [item if isinstance(item, str) else json.dumps(item) for item in items]


class _Stopped(Exception):
    pass


class ScriptedLLMServer:
    """Scripted OpenAI-compatible HTTP server (``/v1/chat/completions``, ``/v1/models``).

    Thread-safe: requests are served concurrently, and the scripting methods may
    be called from any thread while the server is running.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        model: str = "scripted-model",
        latency: float = 0.0,
        embedder: Callable[[list[str], int], list[list[float]]] | None = None,
        profile: ProviderProfile | None = None,
        api_key: str | None = None,
    ):
        """``latency``: seconds every chat completion waits before answering (a model's think time;
        default 0). ``embedder(texts, dims)`` answers ``/v1/embeddings`` (default: deterministic
        hashed unit vectors, ``dims`` from the request's ``dimensions``, else 64). ``profile``: a
        provider's request validation and answer style (graphmem/testing/providers.py; default: plain
        OpenAI tool calling). ``api_key``: when set, any other bearer key is answered 401."""
        if latency < 0:
            raise ValueError("latency must be >= 0")
        self.host = host
        self.port = port
        self.model = model
        self.latency = float(latency)
        self.embedder = embedder or hashed_vectors
        self.profile = profile
        self.api_key = api_key
        self.embedding_calls = 0
        self.embedded_texts = 0
        self.embedding_dims = 64  # the size of embeddings when neither the request nor the model name fixes it
        #: usage reported by the chat completions answered so far (the ``usage`` of each response)
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self._usage_lock = threading.Lock()
        self._lock = threading.Lock()
        self._queues: dict[str, deque[Reply]] = {}
        self._faults: list[_FaultEntry] = []
        self._handler: Handler | None = None
        self._requests: list[RecordedRequest] = []
        self._unscripted = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._ids = itertools.count(1)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> ScriptedLLMServer:
        """Bind and serve in a daemon thread. Idempotent; returns ``self``."""
        if self._httpd is not None:
            return self
        self._stopping.clear()
        httpd = _HTTPServer((self.host, self.port), _make_handler(self))
        self.port = httpd.server_address[1]
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"ScriptedLLMServer:{self.port}",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving promptly (pending ``timeout`` sleeps are cut short). Idempotent."""
        httpd, thread = self._httpd, self._thread
        if httpd is None:
            return
        self._stopping.set()
        httpd.shutdown()
        httpd.server_close()
        if thread is not None:
            thread.join(timeout=5)
        self._httpd = None
        self._thread = None

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    @property
    def running(self) -> bool:
        return self._httpd is not None

    @property
    def url(self) -> str:
        """Server root, e.g. ``http://127.0.0.1:PORT``."""
        if self._httpd is None:
            raise RuntimeError("ScriptedLLMServer is not started")
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """OpenAI base URL, e.g. ``http://127.0.0.1:PORT/v1``."""
        return self.url + "/v1"

    # ------------------------------------------------------------------ scripting
    def enqueue(self, tool: str, *replies: Reply) -> None:
        """Queue replies for ``tool`` (consumed FIFO, independently per tool).

        Each reply is a dict (arguments of one tool call named ``tool``), a list
        of dicts (several tool calls in one response) or a str (sent verbatim as
        the arguments string, e.g. to test malformed JSON).
        """
        for reply in replies:
            _validate_reply(reply)
        with self._lock:
            self._queues.setdefault(tool, deque()).extend(replies)

    def set_handler(self, fn: Handler | None) -> None:
        """``fn(tool, request_body) -> reply | None``, consulted when ``tool``'s queue
        is empty; ``None`` falls through to the default reply. ``set_handler(None)`` clears it."""
        with self._lock:
            self._handler = fn

    def inject(
        self,
        fault: Fault | str,
        times: int = 1,
        tool: str | None = None,
        delay: float = 5.0,
    ) -> None:
        """Answer the next ``times`` requests for ``tool`` (any tool if ``None``) with ``fault``.

        Faults take precedence over scripted replies and are consumed oldest first.
        """
        fault = Fault(fault)
        if times < 1:
            raise ValueError("times must be >= 1")
        with self._lock:
            self._faults.append(_FaultEntry(fault, int(times), tool, float(delay)))

    def reset(self) -> None:
        """Clear queues, faults, recorded requests, the handler and ``unscripted``."""
        with self._lock:
            self._queues.clear()
            self._faults.clear()
            self._requests.clear()
            self._handler = None
            self._unscripted = 0

    # ------------------------------------------------------------------ inspection
    @property
    def requests(self) -> list[RecordedRequest]:
        """Snapshot of the recorded requests, in arrival order."""
        with self._lock:
            return list(self._requests)

    def calls(self, tool: str | None = None) -> int:
        """Number of requests received (faulted ones included), optionally for one tool."""
        with self._lock:
            if tool is None:
                return len(self._requests)
            return sum(1 for r in self._requests if tool in (r.tools or (r.tool,)))

    def pending(self, tool: str | None = None) -> int:
        """Number of scripted replies not yet consumed, optionally for one tool."""
        with self._lock:
            if tool is not None:
                return len(self._queues.get(tool, ()))
            return sum(len(q) for q in self._queues.values())

    @property
    def unscripted(self) -> int:
        """Requests answered with a default reply (nothing scripted, no handler answer)."""
        with self._lock:
            return self._unscripted

    # ------------------------------------------------------------------ internals
    def _record_and_take_fault(self, path: str, body: dict[str, Any]) -> tuple[str | None, _FaultEntry | None]:
        tool = _tool_of(body)
        tools = tuple(_tools_of(body))
        with self._lock:
            entry = None
            for candidate in self._faults:
                if candidate.tool is None or candidate.tool == tool or candidate.tool in tools:
                    entry = candidate
                    break
            taken = None
            if entry is not None:
                entry.remaining -= 1
                if entry.remaining <= 0:
                    self._faults.remove(entry)
                taken = _FaultEntry(entry.fault, 1, entry.tool, entry.delay)
            self._requests.append(
                RecordedRequest(tool=tool, body=body, path=path, fault=taken.fault if taken else None, tools=tools)
            )
        return tool, taken

    def _next_reply(self, tool: str | None, body: dict[str, Any]) -> Reply | None:
        """Scripted reply, handler reply or default; ``None`` means "no tool call"."""
        with self._lock:
            queue = self._queues.get(tool) if tool is not None else None
            if queue:
                return queue.popleft()
            handler = self._handler
        if handler is not None:
            reply = handler(tool, body)
            if reply is not None:
                _validate_reply(reply)
                return reply
        with self._lock:
            self._unscripted += 1
        if tool is None:
            return None
        return dict(DEFAULT_REPLIES.get(tool, {}))

    def _completion(
        self,
        body: dict[str, Any],
        tool_calls: list[tuple[str, str]] | None,
        content: str | None = None,
    ) -> dict[str, Any]:
        n = next(self._ids)
        message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
        if tool_calls:
            message["content"] = None
            message["tool_calls"] = [
                {
                    "id": f"call_{n}_{i}",
                    "type": "function",
                    "function": {"name": name, "arguments": arguments},
                }
                for i, (name, arguments) in enumerate(tool_calls)
            ]
            completion_len = sum(len(arguments) for _, arguments in tool_calls)
            finish_reason = "tool_calls"
        else:
            completion_len = len(content or "")
            finish_reason = "stop"
        prompt_tokens = _prompt_tokens(body)
        completion_tokens = completion_len // 4
        with self._usage_lock:
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
        model = body.get("model") if isinstance(body.get("model"), str) else self.model
        return {
            "id": f"chatcmpl-scripted-{n}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model or self.model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }

    def refusals(self, kind: str | None = None) -> list[str]:
        """What the provider profile refused, one entry per refused request (optionally one kind)."""
        with self._lock:
            return [r.refused for r in self._requests if r.refused and (kind is None or r.refused == kind)]

    def _refuse(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes] | None:
        refusal = self.profile.check(body) if self.profile is not None else None
        if refusal is None:
            return None
        status, payload, kind = refusal
        with self._lock:
            self._requests.append(RecordedRequest(tool=_tool_of(body), body=body, path=path, tools=tuple(_tools_of(body)), refused=kind))
        return status, {}, payload

    def _respond(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        """Compute (status, extra headers, body bytes) for a chat-completions request."""
        refused = self._refuse(path, body)
        if refused is not None:
            return refused
        tool, fault = self._record_and_take_fault(path, body)
        faulted = self._faulted(tool, fault, body)
        if faulted is not None:
            return faulted
        return self._answer(tool, body)

    def _faulted(self, tool: str | None, fault: _FaultEntry | None, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes] | None:
        """The answer of an injected fault; None when the request is answered (after any timeout
        fault's or the latency's wait). Raises _Stopped when the server stops while waiting."""
        kind = fault.fault if fault is not None else None
        if kind is Fault.RATE_LIMIT:
            return 429, {"retry-after": "0", "retry-after-ms": "0"}, _error_bytes(
                "Rate limit reached (scripted fault).", "rate_limit_error", "rate_limit_exceeded"
            )
        if kind is Fault.SERVER_ERROR:
            return 500, {}, _error_bytes(
                "The server had an error while processing your request (scripted fault).",
                "server_error",
                None,
            )
        if kind is Fault.BAD_JSON_BODY:
            return 200, {}, BAD_JSON_BODY
        if kind is Fault.MALFORMED:
            return 200, {}, _json_bytes(self._completion(body, [(tool or "", MALFORMED_ARGUMENTS)]))
        if kind is Fault.UNKNOWN_TOOL:
            return 200, {}, _json_bytes(self._completion(body, [(UNKNOWN_TOOL_NAME, "{}")]))
        if kind is Fault.NO_TOOL_CALL:
            return 200, {}, _json_bytes(self._completion(body, None, NO_TOOL_CALL_TEXT))
        if kind is Fault.TIMEOUT and fault is not None:
            if self._stopping.wait(fault.delay):
                raise _Stopped()
        if self.latency and self._stopping.wait(self.latency):
            raise _Stopped()
        return None

    def _answer(self, tool: str | None, body: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
        """The scripted tool calls for every tool the request wants (a handler's failure: a 500)."""
        calls: list[tuple[str, str]] = []
        wanted = [*_tools_of(body)] or (self.profile.json_tools(body) if self.profile is not None else [])
        names: list[str | None] = [*wanted] or [tool]
        for name in names:
            try:
                reply = self._next_reply(name, body)
            except Exception as exc:  # a broken handler: surface it to the client
                return 500, {}, _error_bytes(
                    f"ScriptedLLMServer handler failed: {type(exc).__name__}: {exc}",
                    "scripted_handler_error",
                    None,
                )
            if reply is not None:
                calls.extend((name or "", arguments) for arguments in _arguments_list(reply))
        if not calls:
            return 200, {}, _json_bytes(self._completion(body, None, ""))
        completion = self._completion(body, calls)
        if self.profile is not None:
            completion = self.profile.shape(completion, body, calls)
        return 200, {}, _json_bytes(completion)

    def _embeddings(self, body: dict[str, Any]) -> tuple[int, bytes]:
        """Answer ``/v1/embeddings`` (counted in ``embedding_calls``; not recorded in ``requests``)."""
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return 400, _error_bytes("input must be a string or a list of strings", "invalid_request_error", None)
        dims = body.get("dimensions")
        if not (isinstance(dims, int) and not isinstance(dims, bool) and dims > 0):  # OpenAI's sizes for its models
            dims = _MODEL_DIMS.get(str(body.get("model")), self.embedding_dims)
        with self._lock:
            self.embedding_calls += 1
            self.embedded_texts += len(texts)
        vectors = self.embedder(texts, dims)
        data = [{"object": "embedding", "index": i, "embedding": list(v)} for i, v in enumerate(vectors)]
        tokens = sum(len(t) for t in texts) // 4
        return 200, _json_bytes({"object": "list", "data": data, "model": body.get("model") or self.model,
                                 "usage": {"prompt_tokens": tokens, "total_tokens": tokens}})

    def _models(self) -> dict[str, Any]:
        return {
            "object": "list",
            "data": [{"id": self.model, "object": "model", "created": 0, "owned_by": "graphmem"}],
        }

    def __repr__(self) -> str:
        state = f"port={self.port}" if self.running else "stopped"
        return f"<ScriptedLLMServer {state} model={self.model!r}>"


def hashed_vectors(texts: list[str], dims: int) -> list[list[float]]:
    """Deterministic unit vectors from hashed words (a stand-in embedding model, stdlib only)."""
    out = []
    for text in texts:
        vec = [0.0] * dims
        for word in text.casefold().split() or [""]:
            digest = hashlib.blake2b(word.encode("utf-8"), digest_size=8).digest()
            vec[int.from_bytes(digest[:4], "little") % dims] += 1.0 if digest[4] & 1 else -1.0
        norm = math.sqrt(sum(x * x for x in vec)) or 1.0
        out.append([x / norm for x in vec])
    return out


def _json_bytes(obj: Any) -> bytes:
    return json.dumps(obj).encode("utf-8")


def _error_bytes(message: str, type_: str, code: str | None) -> bytes:
    return _json_bytes({"error": {"message": message, "type": type_, "param": None, "code": code}})


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # stop() must not wait for sleeping (timeout-fault) requests
    allow_reuse_address = True
    request_queue_size = 128  # listen backlog: many concurrent clients connect at once

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients going away (timeouts) are expected; stay silent


_CHAT_PATHS = {"/v1/chat/completions", "/chat/completions"}
_MODELS_PATHS = {"/v1/models", "/models"}
_EMBEDDING_PATHS = {"/v1/embeddings", "/embeddings"}


class _Handler(BaseHTTPRequestHandler):
    """One request to a ScriptedLLMServer (``scripted``, set by _make_handler)."""

    scripted: ScriptedLLMServer
    protocol_version = "HTTP/1.0"  # one request per connection: nothing lingers after stop()
    server_version = "ScriptedLLMServer/1.0"
    sys_version = ""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, payload: bytes, headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self.wfile.write(payload)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError, OSError):
            pass  # the client gave up (e.g. after a client-side timeout)

    def _path(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/") or "/"

    def _gate(self) -> str | None:
        """The OpenAI path of this request after the profile's routing and the key check; None
        when a refusal was sent."""
        path = self._path()
        if self.scripted.profile is not None:
            query = parse_qs(self.path.split("?", 1)[1]) if "?" in self.path else {}
            routed, refusal = self.scripted.profile.route(path, query, self.headers)
            if refusal is not None:
                self._send(refusal[0], refusal[1])
                return None
            path = routed or path
        key = self.headers.get("api-key") or (self.headers.get("Authorization") or "").removeprefix("Bearer ")
        if self.scripted.api_key is not None and key != self.scripted.api_key:
            self._send(401, _error_bytes("Incorrect API key provided.", "invalid_request_error", "invalid_api_key"))
            return None
        return path

    def do_GET(self) -> None:
        path = self._path()
        if path in _MODELS_PATHS:
            self._send(200, _json_bytes(self.scripted._models()))
        elif path.startswith("/v1/models/") and path[len("/v1/models/"):] == self.scripted.model:
            self._send(200, _json_bytes(self.scripted._models()["data"][0]))
        else:
            self._send(404, _error_bytes(f"Unknown path {path}", "invalid_request_error", "not_found"))

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length > 0 else b""
        gated = self._gate()
        if gated is None:
            return
        path = gated
        if path not in _CHAT_PATHS and path not in _EMBEDDING_PATHS:
            self._send(404, _error_bytes(f"Unknown path {path}", "invalid_request_error", "not_found"))
            return
        try:
            body = json.loads(raw.decode("utf-8") or "null")
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            self._send(400, _error_bytes(f"Request body is not JSON: {exc}", "invalid_request_error", None))
            return
        if not isinstance(body, dict):
            self._send(400, _error_bytes("Request body must be a JSON object", "invalid_request_error", None))
            return
        if path in _EMBEDDING_PATHS:
            status, payload = self.scripted._embeddings(body)
            self._send(status, payload)
            return
        try:
            status, headers, payload = self.scripted._respond(path, body)
        except _Stopped:
            return  # server is stopping; drop the connection
        self._send(status, payload, headers)


def _make_handler(server: ScriptedLLMServer) -> type[BaseHTTPRequestHandler]:
    """http.server makes one handler per request from a class: a subclass bound to ``server``."""
    return type("_Handler", (_Handler,), {"scripted": server})
