"""``graphmem mcp`` end to end: the MCP SDK's real client talks to the server process over stdio and
over streamable HTTP, on both stores, with the scripted LLM server behind it."""

from __future__ import annotations

import asyncio
import json
import re
import sys
import uuid
from typing import Any

import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from servers import free_port, graphmem_command, running, write_config

from graphmem.server.mcp import TOOL_NAMES
from graphmem.testing import ScriptedLLMServer

STORES = ["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)]


@pytest.fixture
def llm():
    with ScriptedLLMServer() as s:
        yield s


def _config(request, tmp_path, llm, store: str) -> str:
    uri = request.getfixturevalue("neo4j_uri") if store == "neo4j" else None
    return str(write_config(tmp_path, llm.base_url, store, uri))


def _script_add(llm: ScriptedLLMServer) -> None:
    llm.enqueue("extract_facts", {"facts": ["Lives in Lisbon"]})
    llm.enqueue("extract_entities", {"entities": [{"entity": "I", "entity_type": "person"}, {"entity": "Lisbon", "entity_type": "city"}]})
    llm.enqueue("establish_relationships", {"relations": [{"source": "I", "relationship": "lives_in", "destination": "Lisbon",
                                                           "valid_at": "2020-01-01"}]})


async def _ok(client: Client, tool: str, args: dict[str, Any]) -> Any:
    result = await client.call_tool(tool, args)
    assert not result.is_error, (tool, result.content)
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(result.content[0].text)


async def _error(client: Client, tool: str, args: dict[str, Any]) -> str:
    result = await client.call_tool(tool, args)
    assert result.is_error, (tool, args, result)
    return result.content[0].text


async def _exercise(client: Client, llm: ScriptedLLMServer, scope: dict[str, str]) -> None:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == set(TOOL_NAMES)
    for tool in tools.values():
        assert tool.description and len(tool.description) > 30 and tool.input_schema["type"] == "object"
        assert tool.input_schema.get("additionalProperties") is False
    _script_add(llm)
    added = await _ok(client, "add_memory", {"messages": [{"role": "user", "content": "I have lived in Lisbon since 2020"}], **scope})
    assert [r["memory"] for r in added["results"]] == ["Lives in Lisbon"]
    assert added["relations"][0]["provenance"] == {"added_by": [added["add_id"]], "retired_by": None}
    found = await _ok(client, "search_memory", {"query": "Lisbon", "limit": 5, **scope})
    assert found["results"][0]["memory"] == "Lives in Lisbon" and found["relations"][0]["destination"] == "Lisbon"
    past = await _ok(client, "search_memory", {"query": "Lisbon", "as_of": "2019-06-01", **scope})
    assert past["relations"] == []
    mem_id = found["results"][0]["id"]
    assert (await _ok(client, "get_memory", {"memory_id": mem_id, **scope}))["memory"] == "Lives in Lisbon"
    listed = await _ok(client, "get_memories", scope)
    assert [m["id"] for m in listed["results"]] == [mem_id] and len(listed["relations"]) == 1
    assert (await _ok(client, "update_memory", {"memory_id": mem_id, "text": "Lives in Porto", **scope}))["memory"] == "Lives in Porto"
    timeline = await _ok(client, "entity_timeline", {"entity": "Lisbon", **scope})
    assert [r["relationship"] for r in timeline["relations"]] == ["LIVES_IN"]
    why = await _ok(client, "relation_provenance", {"add_id": added["add_id"], **scope})
    assert [m["content"] for m in why["messages"]] == ["I have lived in Lisbon since 2020"]
    assert [r["destination"] for r in why["relations"]["asserted"]] == ["Lisbon"]
    hood = await _ok(client, "entity_neighbourhood", {"entity": "me", **scope})
    assert [r["destination"] for r in hood["relations"]] == ["Lisbon"]
    assert await _ok(client, "entity_neighbourhood", {"entity": "me", "as_of": "2019-01-01", **scope}) == {"entity": "me", "relations": []}
    assert (await _ok(client, "get_summary", scope))["summary"] is None

    calls_before = llm.calls()
    assert "colour" in await _error(client, "search_memory", {"query": "x", "colour": "red", **scope})
    assert "as_of" in await _error(client, "search_memory", {"query": "x", "as_of": "last tuesday", **scope})
    assert "timestamp" in await _error(client, "add_memory", {"messages": "hello", "timestamp": "31/12/2024", **scope})
    assert "notfounderror" in (await _error(client, "get_memory", {"memory_id": "no-such-id", **scope})).lower()
    assert llm.calls() == calls_before  # refused before any work
    assert [m["id"] for m in (await _ok(client, "get_memories", scope))["results"]] == [mem_id]  # nothing written
    await _ok(client, "delete_memory", {"memory_id": mem_id, **scope})
    assert (await _ok(client, "get_memories", scope))["results"] == []


@pytest.mark.parametrize("store", STORES)
def test_stdio_server_serves_one_user(request, tmp_path, llm, store):
    config = _config(request, tmp_path, llm, store)
    user = f"alice-{uuid.uuid4().hex[:6]}"
    params = StdioServerParameters(command=sys.executable, args=graphmem_command("mcp", "--user", user, "--config", config)[1:])

    async def main() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            await _exercise(client, llm, {})
            text = await _error(client, "get_memories", {"user_id": "bob"})  # a fixed server takes no scope argument
            assert "user_id" in text

    asyncio.run(main())


@pytest.mark.parametrize("store", STORES)
def test_http_server_with_scope_per_call(request, tmp_path, llm, store):
    config = _config(request, tmp_path, llm, store)
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    alice, bob = f"alice-{uuid.uuid4().hex[:6]}", f"bob-{uuid.uuid4().hex[:6]}"

    async def main() -> None:
        async with Client(url, read_timeout_seconds=60) as client:
            await _exercise(client, llm, {"user_id": alice})
            kept = await _ok(client, "add_memory", {"messages": "bob's secret", "infer": False, "user_id": bob})
            bobs = kept["results"][0]["id"]
            assert "notfounderror" in (await _error(client, "get_memory", {"memory_id": bobs, "user_id": alice})).lower()
            assert "notfounderror" in (await _error(client, "delete_memory", {"memory_id": bobs, "user_id": alice})).lower()
            # bob's add asked about in alice's scope: the same tool error as an id nobody wrote
            unknown = uuid.uuid4().hex
            theirs = await _error(client, "relation_provenance", {"add_id": kept["add_id"], "user_id": alice})
            missing = await _error(client, "relation_provenance", {"add_id": unknown, "user_id": alice})
            assert "NotFoundError: no add with id" in theirs and theirs == missing.replace(unknown, kept["add_id"])
            why = await _ok(client, "relation_provenance", {"add_id": kept["add_id"], "user_id": bob})
            assert [e["new_memory"] for e in why["memories"]] == ["bob's secret"]
            assert "user_id" in await _error(client, "search_memory", {"query": "secret"})  # no scope at all
            assert (await _ok(client, "get_memory", {"memory_id": bobs, "user_id": bob}))["memory"] == "bob's secret"

    args = graphmem_command("mcp", "--http", "--port", str(port), "--scope-per-call", "--no-auth", "--config", config)
    with running(args, f"http://127.0.0.1:{port}/mcp", tmp_path / "mcp.log"):
        asyncio.run(main())
    log = (tmp_path / "mcp.log").read_text(errors="replace")  # one access line per tool call, no arguments
    assert re.search(r"tool add_memory ok [\d.]+ms", log) and re.search(r"tool get_memory NotFoundError [\d.]+ms", log), log[-2000:]
    assert "bob's secret" not in log and alice not in log


def test_documented_snippet_registers_a_valid_command():
    from pathlib import Path

    from graphmem.cli.main import build_parser

    page = (Path(__file__).resolve().parent.parent / "docs" / "servers.md").read_text(encoding="utf-8")
    block = next(b for b in page.split("```json")[1:] if "mcpServers" in b).split("```")[0]
    server = json.loads(block)["mcpServers"]["graphmem"]
    assert server["command"] == "graphmem"
    ns = build_parser().parse_args(server["args"])
    assert ns.command == "mcp" and ns.serve_user_id == "alice"
