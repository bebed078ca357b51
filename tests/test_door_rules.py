"""One rule per door, from one table (issue 45 item 6): the largest result ``limit``, the message
roles, how deep a request may nest and strict types are graphmem.schema.limits' on the Python API,
the CLI, REST and MCP (stdio and HTTP), and every refusal comes in graphmem's shape whatever layer
detects it (REST: {"detail": str, "error": name}; MCP: a tool error "ErrorName: detail").

Before: REST refused a search limit over 1,000 with FastAPI's 422 ValidationError and MCP over 100;
REST refused the role "tool" and MCP "system" and "tool"; metadata nested 1,200 deep got FastAPI's bare
{"detail": "There was an error parsing the body"} and a JSON-RPC parse error over MCP; "yes" and "10"
were taken as true and 10. Real server processes, real clients (httpx, the MCP SDK's)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from typing import Any

import httpx
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from servers import free_port, graphmem_command, running, write_config

from graphmem import InvalidInputError, Memory
from graphmem.embeddings import HashingEmbedder
from graphmem.schema import limits as L
from graphmem.server.access import hash_key
from graphmem.testing import ScriptedLLMServer

KEY = "key-rules-" + uuid.uuid4().hex
OVER = L.RESULT_LIMIT + 1
BIG = 5000  # over every door's old bound (REST 1,000, MCP 100 / 1,000), within the table's
DEEP = 1200  # metadata levels: past every parser's recursion limit


def _python_says(folder) -> str:
    """What the Python API says of a limit over the table's: the text every door must repeat."""
    config = {"llm": {"provider": "openai_compatible", "config": {"base_url": "http://127.0.0.1:9", "model": "x"}},
              "graph_store": {"provider": "embedded", "config": {"path": str(folder / "py-graph")}},
              "history_db_path": str(folder / "py-history.db")}
    with Memory(config, embedder=HashingEmbedder(dims=64)) as memory:
        with pytest.raises(InvalidInputError) as raised:
            memory.search("tea", user_id="u", limit=OVER)
        assert memory.add([{"role": "tool", "content": "tool said tea"}], user_id="u", infer=False)["results"]
    return str(raised.value)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rules")
    (folder / "keys.json").write_text(json.dumps({"keys": [{"name": "ops", "sha256": hash_key(KEY), "admin": True}]}))
    with ScriptedLLMServer() as llm:
        yield folder, llm, _python_says(folder)


def _config(folder, name: str, llm) -> str:
    place = folder / name
    place.mkdir(exist_ok=True)
    return str(write_config(place, llm.base_url, "embedded"))


def _deep_body(user: str) -> bytes:
    """An add whose metadata nests DEEP levels, written by hand (Python's encoder recurses)."""
    metadata = '{"k":' * DEEP + '"x"' + "}" * DEEP
    head = json.dumps({"messages": [{"role": "user", "content": "tea"}], "user_id": user, "infer": False})
    return (head[:-1] + ', "metadata": ' + metadata + "}").encode()


def _graphmem_shaped(answer: httpx.Response, status: int, error: str) -> str:
    assert answer.status_code == status, answer.text
    body = answer.json()
    assert set(body) == {"detail", "error"} and isinstance(body["detail"], str) and body["error"] == error, body
    return body["detail"]


def test_rest_follows_the_table(world):
    folder, llm, python_says = world
    port = free_port()
    args = graphmem_command("serve", "--config", _config(folder, "rest", llm), "--keys", str(folder / "keys.json"),
                            "--port", str(port))
    user = f"u-{uuid.uuid4().hex[:6]}"
    with running(args, f"http://127.0.0.1:{port}/health", folder / "rest.log"), \
            httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"X-API-Key": KEY}, timeout=60) as c:
        # the table's limit and roles, as the door's own schema states them (docs/servers.md's table)
        schema = c.get("/openapi.json").json()
        listing = next(p for p in schema["paths"]["/memories"]["get"]["parameters"] if p["name"] == "limit")
        parts = schema["components"]["schemas"]
        assert (parts["SearchRequest"]["properties"]["limit"]["maximum"], listing["schema"]["maximum"]) == (L.RESULT_LIMIT,) * 2
        assert ", ".join(parts["Message"]["properties"]["role"]["enum"]) == L.door_rules()["message roles"][2]
        assert c.post("/search", json={"query": "tea", "user_id": user, "limit": BIG}).status_code == 200
        assert c.get("/memories", params={"user_id": user, "limit": BIG}).status_code == 200
        said = _graphmem_shaped(c.post("/search", json={"query": "tea", "user_id": user, "limit": OVER}), 400, "InvalidInputError")
        assert said == python_says
        assert _graphmem_shaped(c.get("/memories", params={"user_id": user, "limit": OVER}), 400, "InvalidInputError") == python_says
        tool = c.post("/memories", json={"messages": [{"role": "tool", "content": "the tool says tea"}], "user_id": user,
                                         "infer": False})
        assert tool.status_code == 200, tool.text
        # depth: the rule named, in graphmem's shape
        deep = c.post("/memories", content=_deep_body(user), headers={"content-type": "application/json"})
        assert "METADATA_DEPTH" in _graphmem_shaped(deep, 400, "LimitExceededError")
        # strict types: no "yes", no "10"
        message = [{"role": "user", "content": "coffee"}]
        for body in ({"messages": message, "user_id": user, "infer": "yes"}, {"messages": message, "user_id": user, "infer": 0}):
            assert "infer" in _graphmem_shaped(c.post("/memories", json=body), 400, "InvalidInputError")
        assert "limit" in _graphmem_shaped(c.post("/search", json={"query": "tea", "user_id": user, "limit": "10"}), 400,
                                           "InvalidInputError")
        for params in ({"include_invalidated": "yes"}, {"limit": "10.0"}):
            _graphmem_shaped(c.get("/memories", params={"user_id": user, **params}), 400, "InvalidInputError")
        assert c.get("/memories", params={"user_id": user, "include_invalidated": "true", "limit": "10"}).status_code == 200
        # every other refusal in the same shape: unknown field, route, method, key, another user's scope
        _graphmem_shaped(c.post("/search", json={"query": "tea", "user_id": user, "colour": 1}), 400, "InvalidInputError")
        _graphmem_shaped(c.get("/no-such-route"), 404, "NotFoundError")
        _graphmem_shaped(c.patch("/search"), 405, "MethodNotAllowed")
        _graphmem_shaped(httpx.get(f"http://127.0.0.1:{port}/memories", params={"user_id": user}), 401, "Unauthorized")
        # nothing refused was written; the tool message was kept
        kept = c.get("/memories", params={"user_id": user}).json()["results"]
        assert [m["memory"] for m in kept] == ["the tool says tea"]
    assert llm.calls() == 0


async def _tool_text(client: Client, tool: str, args: dict[str, Any]) -> tuple[bool, str]:
    result = await client.call_tool(tool, args)
    text = result.content[0].text if result.content else ""
    return bool(result.is_error), text.split(": ", 1)[1] if text.startswith("Error executing tool ") else text


async def _mcp_rules(client: Client, scope: dict[str, str], python_says: str) -> None:
    tools = {t.name: t.input_schema for t in (await client.list_tools()).tools}
    assert tools["search_memory"]["properties"]["limit"]["maximum"] == tools["get_memories"]["properties"]["limit"]["maximum"] \
        == L.RESULT_LIMIT
    message = tools["add_memory"]["$defs"]["Message"]["properties"]["role"]
    assert ", ".join(message["enum"]) == L.door_rules()["message roles"][3]
    for tool, args in (("search_memory", {"query": "tea", "limit": BIG}), ("get_memories", {"limit": BIG}),
                       ("add_memory", {"messages": [{"role": "tool", "content": "the tool says tea"},
                                                    {"role": "system", "content": "be brief"}], "infer": False})):
        failed, text = await _tool_text(client, tool, {**args, **scope})
        assert not failed, (tool, text)
    for tool, args in (("search_memory", {"query": "tea", "limit": OVER}), ("get_memories", {"limit": OVER})):
        assert await _tool_text(client, tool, {**args, **scope}) == (True, f"InvalidInputError: {python_says}")
    for tool, args, name in (("add_memory", {"messages": "coffee", "infer": "yes"}, "infer"),
                             ("search_memory", {"query": "tea", "limit": "10"}, "limit"),
                             ("search_memory", {"query": "tea", "limit": 10.0}, "limit"),
                             ("get_memories", {"include_invalidated": "true"}, "include_invalidated"),
                             ("add_memory", {"messages": '[{"role": "user", "content": "json in a string"}]',
                                             "metadata": '{"a": 1}'}, "metadata")):
        failed, text = await _tool_text(client, tool, {**args, **scope})
        assert failed and text.startswith("InvalidInputError: ") and name in text, (tool, args, text)
    listed = await client.call_tool("get_memories", scope)
    body = listed.structured_content or json.loads(listed.content[0].text)
    assert sorted(m["memory"] for m in body["results"]) == ["the tool says tea"]  # a system message is context only


def test_mcp_stdio_follows_the_table(world):
    folder, llm, python_says = world
    params = StdioServerParameters(command=sys.executable, args=graphmem_command(
        "mcp", "--user", f"u-{uuid.uuid4().hex[:6]}", "--config", _config(folder, "stdio", llm))[1:])

    async def main() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            await _mcp_rules(client, {}, python_says)

    asyncio.run(main())
    assert llm.calls() == 0


def _rpc(c: httpx.Client, body: bytes, session: str | None) -> httpx.Response:
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream",
               "mcp-protocol-version": "2025-06-18"}
    return c.post("/mcp", content=body, headers={**headers, **({"mcp-session-id": session} if session else {})})


def test_mcp_http_follows_the_table_and_names_the_depth_rule(world):
    folder, llm, python_says = world
    port = free_port()
    args = graphmem_command("mcp", "--http", "--scope-per-call", "--keys", str(folder / "keys.json"), "--port", str(port),
                            "--config", _config(folder, "mcp-http", llm))
    user = f"u-{uuid.uuid4().hex[:6]}"
    url = f"http://127.0.0.1:{port}"

    async def main() -> None:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {KEY}"})
        async with Client(streamable_http_client(f"{url}/mcp", http_client=http), read_timeout_seconds=60) as client:
            await _mcp_rules(client, {"user_id": user}, python_says)

    with running(args, f"{url}/health", folder / "mcp-http.log"), \
            httpx.Client(base_url=url, headers={"Authorization": f"Bearer {KEY}"}, timeout=60) as c:
        asyncio.run(main())
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
        started = _rpc(c, json.dumps(hello).encode(), None)
        assert started.status_code == 200, started.text
        session = started.headers.get("mcp-session-id")
        _rpc(c, b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', session)
        call = (b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "add_memory", "arguments": '
                + _deep_body(user) + b"}}")
        answer = _rpc(c, call, session)
        assert answer.status_code == 200, answer.text
        reply = answer.json()
        assert reply["id"] == 7 and reply["result"]["isError"] is True, reply
        text = reply["result"]["content"][0]["text"]
        assert text.startswith("LimitExceededError: ") and "METADATA_DEPTH" in text, text
    assert llm.calls() == 0


def test_cli_limit_is_the_tables(world, tmp_path):
    folder, llm, _ = world
    config = _config(folder, "cli", llm)
    for command in (["search", "tea"], ["get-all"]):
        done = subprocess.run(graphmem_command(*command, "--user", "u", "--limit", str(OVER), "--config", config),
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and f"must be at most {L.RESULT_LIMIT}" in done.stderr, done.stderr
        done = subprocess.run(graphmem_command(*command, "--user", "u", "--limit", str(BIG), "--config", config),
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr


def test_python_takes_nothing_for_a_boolean(tmp_path):
    """The core refuses what the servers refuse: "yes" and 1 are not True (add, add_many, get_all)."""
    config = {"llm": {"provider": "openai_compatible", "config": {"base_url": "http://127.0.0.1:9", "model": "x"}},
              "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "graph")}},
              "history_db_path": str(tmp_path / "history.db")}
    with Memory(config, embedder=HashingEmbedder(dims=64)) as memory:
        for call, name in ((lambda: memory.add("tea", user_id="u", infer="yes"), "infer"),
                           (lambda: memory.add_many([{"messages": "tea", "user_id": "u"}], infer=1), "infer"),
                           (lambda: memory.get_all(user_id="u", include_invalidated="yes"), "include_invalidated")):
            with pytest.raises(InvalidInputError, match=f"{name} must be true or false"):
                call()
        assert memory.get_all(user_id="u")["results"] == []  # nothing written, no model asked


def test_the_door_table_is_documented():
    """docs/servers.md shows the per-door table as limits.door_table() renders it."""
    from pathlib import Path

    docs = (Path(__file__).resolve().parent.parent / "docs" / "servers.md").read_text(encoding="utf-8")
    assert L.door_table() in docs
