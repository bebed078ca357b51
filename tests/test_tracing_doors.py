"""Tracing through graphmem's doors (issue 46): a REST request and an MCP tool call over streamable
HTTP carrying a W3C ``traceparent`` get a SERVER span child of it, with graphmem's call spans below;
AsyncMemory keeps the caller's span as the parent across its thread hop. Servers run under uvicorn
in a thread of the test process (their spans reach the test's in-memory exporter) and are spoken
to over HTTP by real clients (httpx; the MCP SDK's client)."""

from __future__ import annotations

import asyncio
import uuid

import httpx
import pytest
from conftest import TEST_DIMS
from helpers import graph, make_memory, script
from opentelemetry import trace
from servers import serving_in_thread
from tracing_helpers import children, one, texts

from graphmem.aio import AsyncMemory
from graphmem.stores.embedded import EmbeddedStore

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE_ID}-{PARENT_ID}-01"


@pytest.fixture
def memory(server, tmp_path):
    m = make_memory(server, EmbeddedStore(tmp_path / "g", TEST_DIMS), TEST_DIMS, history_db_path=str(tmp_path / "h.db"),
                    context={"summary_every": 0})
    yield m
    m.close()




def theirs(finished: list) -> list:
    """The spans of the caller's trace (the one its traceparent header names)."""
    return [s for s in finished if format(s.context.trace_id, "032x") == TRACE_ID]


def joined(finished: list, name: str, call: str) -> None:
    """``name`` is a SERVER span of the incoming trace, child of its parent span, and the graphmem
    call ``call`` is its child."""
    request = one(theirs(finished), name)
    assert request.kind is trace.SpanKind.SERVER
    assert format(request.context.trace_id, "032x") == TRACE_ID and format(request.parent.span_id, "016x") == PARENT_ID
    assert request.parent.is_remote
    (graphmem_call,) = [s for s in children(finished, request) if s.name == call]
    assert graphmem_call.context.trace_id == request.context.trace_id


def test_a_rest_request_joins_the_callers_trace(memory, server, spans):
    from graphmem.server.rest import create_app

    uid = f"u-{uuid.uuid4().hex[:8]}"
    script(server, graph([("I", "person"), ("Lisbon", "city")], [("I", "lives_in", "Lisbon")]))
    server.enqueue("extract_facts", {"facts": ["Lives in Lisbon"]})
    with serving_in_thread(create_app(AsyncMemory(memory=memory), None)) as url:
        added = httpx.post(f"{url}/memories", json={"messages": [{"role": "user", "content": "I live in Lisbon."}],
                                                    "user_id": uid}, headers={"traceparent": TRACEPARENT}, timeout=60)
        assert added.status_code == 200, added.text
        found = httpx.post(f"{url}/search", json={"query": "where do I live?", "user_id": uid},
                           headers={"traceparent": TRACEPARENT}, timeout=60)
        assert found.status_code == 200
        missing = httpx.get(f"{url}/memories/nope", headers={"traceparent": TRACEPARENT}, timeout=60)
        assert missing.status_code == 404
        untraced = httpx.get(f"{url}/memories", params={"user_id": uid}, timeout=60)  # no traceparent: a trace of its own
        assert untraced.status_code == 200
    finished = list(spans.get_finished_spans())
    joined(finished, "POST /memories", "graphmem.add")
    joined(finished, "POST /search", "graphmem.search")
    request = one(finished, "POST /memories")
    assert request.attributes["http.route"] == "/memories" and request.attributes["http.response.status_code"] == 200
    add = one(finished, "graphmem.add")
    assert add.attributes["graphmem.user_id"] == uid
    assert any(s.name.startswith("chat ") and s.context.trace_id == add.context.trace_id for s in finished)
    assert one(finished, "GET /memories/{memory_id}").attributes["http.response.status_code"] == 404
    listing = one(finished, "GET /memories")
    assert listing.parent is None and format(listing.context.trace_id, "032x") != TRACE_ID
    assert not [t for s in finished for t in texts(s) if "Lisbon" in t or "where do I live" in t]


def test_an_mcp_tool_call_over_http_joins_the_callers_trace(memory, server, spans):
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    from graphmem.server.mcp import build_server

    uid = f"u-{uuid.uuid4().hex[:8]}"
    script(server, graph([("I", "person"), ("Porto", "city")], [("I", "lives_in", "Porto")]))
    server.enqueue("extract_facts", {"facts": ["Lives in Porto"]})
    mcp = build_server(AsyncMemory(memory=memory), {"user_id": uid})
    app = mcp.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")

    async def talk(url: str) -> None:
        http = create_mcp_http_client(headers={"traceparent": TRACEPARENT})
        async with Client(streamable_http_client(f"{url}/mcp", http_client=http), read_timeout_seconds=60) as client:
            added = await client.call_tool("add_memory", {"messages": "I live in Porto."})
            assert not added.is_error, added.content
            found = await client.call_tool("search_memory", {"query": "where do I live?"})
            assert not found.is_error

    with serving_in_thread(app) as url:
        asyncio.run(talk(url))
    finished = list(spans.get_finished_spans())
    # the SDK's client puts its own trace into each message's _meta, which the SDK's server span follows;
    # graphmem's joins the one the HTTP headers name (as a client without the SDK's tracing sends it)
    joined(finished, "tools/call add_memory", "graphmem.add")
    joined(finished, "tools/call search_memory", "graphmem.search")
    tool = one(theirs(finished), "tools/call add_memory")
    assert tool.attributes["mcp.method.name"] == "tools/call" and tool.attributes["gen_ai.tool.name"] == "add_memory"
    assert one(finished, "graphmem.add").attributes["graphmem.user_id"] == uid
    assert not [t for s in finished for t in texts(s) if "Porto" in t]


def test_an_mcp_call_traced_by_the_sdks_client_is_not_traced_twice(memory, server, spans):
    """A client whose current span is the one its headers name: the SDK's server span (joined through
    _meta) is the call's only one, graphmem's spans below it."""
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client
    from opentelemetry.propagate import inject

    from graphmem.server.mcp import build_server

    uid = f"u-{uuid.uuid4().hex[:8]}"
    mcp = build_server(AsyncMemory(memory=memory), {"user_id": uid})
    app = mcp.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
    tracer = trace.get_tracer("the-agent")

    async def talk(url: str) -> None:
        with tracer.start_as_current_span("agent turn"):
            headers: dict[str, str] = {}
            inject(headers)
            http = create_mcp_http_client(headers=headers)
            async with Client(streamable_http_client(f"{url}/mcp", http_client=http), read_timeout_seconds=60) as client:
                assert not (await client.call_tool("search_memory", {"query": "anything?"})).is_error

    with serving_in_thread(app) as url:
        asyncio.run(talk(url))
    finished = list(spans.get_finished_spans())
    turn = one(finished, "agent turn")
    (call,) = [s for s in finished if s.name == "tools/call search_memory"]
    assert call.context.trace_id == turn.context.trace_id
    assert one(finished, "graphmem.search").parent.span_id == call.context.span_id


def test_async_memory_keeps_the_callers_span_as_parent(memory, server, spans):
    uid = f"u-{uuid.uuid4().hex[:8]}"
    tracer = trace.get_tracer("the-application")

    async def run() -> None:
        async_memory = AsyncMemory(memory=memory)
        with tracer.start_as_current_span("handle request"):
            await async_memory.add("I keep bees.", user_id=uid, infer=False)
            await asyncio.gather(async_memory.search("bees", user_id=uid), async_memory.get_all(user_id=uid))

    asyncio.run(run())
    finished = list(spans.get_finished_spans())
    caller = one(finished, "handle request")
    assert {s.name for s in children(finished, caller)} == {"graphmem.add", "graphmem.search", "graphmem.get_all"}
