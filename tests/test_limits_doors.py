"""The limit table through every door (issue 33): the same input over a limit is refused by the Python
API, the REST server, the MCP server over stdio and over HTTP, and `graphmem import`, each with the
same LimitExceededError message in its own shape (REST 400 JSON, MCP tool error, a failed import
item); nothing is written and no model is asked. Values at the limits read back through REST and the
inspector. Real server processes, real clients (httpx, the MCP SDK)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import uuid
from typing import Any

import httpx
import pytest
from conftest import TEST_DIMS
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from servers import free_port, graphmem_command, running, write_config
from test_limits import nest

from graphmem import LimitExceededError, Memory
from graphmem.embeddings import HashingEmbedder
from graphmem.schema import limits as L
from graphmem.server.access import hash_key
from graphmem.testing import ScriptedLLMServer

KEY = "key-limits-" + uuid.uuid4().hex

#: what each refused input is, as add() arguments (messages, metadata)
REFUSED_ADDS: dict[str, tuple[Any, Any]] = {
    "message": ("a" * (L.MESSAGE_CHARS + 1), None),
    "metadata depth": ("hi", nest(L.METADATA_DEPTH + 1)),
    "metadata depth 300": ("hi", nest(300)),
    "metadata key": ("hi", {"k" * (L.METADATA_KEY_CHARS + 1): 1}),
    "metadata keys": ("hi", {f"k{i}": i for i in range(L.METADATA_KEYS + 1)}),
}
LONG_QUERY = "q" * (L.QUERY_CHARS + 1)
LONG_TEXT = "t" * (L.UPDATE_CHARS + 1)


def _python_messages(tmp_path) -> dict[str, str]:
    """What the Python API says for each refused input: the text every door must repeat."""
    config = {"llm": {"provider": "openai_compatible", "config": {"base_url": "http://127.0.0.1:9", "model": "x"}},
              "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "py-graph")}},
              "history_db_path": str(tmp_path / "py-history.db")}
    out = {}
    with Memory(config, embedder=HashingEmbedder(dims=TEST_DIMS)) as memory:
        for name, (messages, metadata) in REFUSED_ADDS.items():
            with pytest.raises(LimitExceededError) as raised:
                memory.add(messages, user_id="u", metadata=metadata, infer=False)
            out[name] = str(raised.value)
        with pytest.raises(LimitExceededError) as raised:
            memory.search(LONG_QUERY, user_id="u")
        out["query"] = str(raised.value)
        (added,) = memory.add("tea", user_id="u", infer=False)["results"]
        with pytest.raises(LimitExceededError) as raised:
            memory.update(added["id"], LONG_TEXT)
        out["update"] = str(raised.value)
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    """One embedded store folder per server (each process owns its store), the keys file, the LLM."""
    folder = tmp_path_factory.mktemp("doors")
    (folder / "keys.json").write_text(json.dumps({"keys": [{"name": "ops", "sha256": hash_key(KEY), "admin": True}]}))
    with ScriptedLLMServer() as llm:
        yield folder, llm, _python_messages(folder)


def _config(folder, name: str, llm) -> str:
    place = folder / name
    place.mkdir(exist_ok=True)
    return str(write_config(place, llm.base_url, "embedded"))


def test_rest_refuses_what_python_refuses_and_reads_back_what_it_accepts(world):
    folder, llm, expected = world
    port = free_port()
    args = graphmem_command("serve", "--config", _config(folder, "rest", llm), "--keys", str(folder / "keys.json"),
                            "--port", str(port))
    user = f"u-{uuid.uuid4().hex[:6]}"
    with running(args, f"http://127.0.0.1:{port}/health", folder / "rest.log"), \
            httpx.Client(base_url=f"http://127.0.0.1:{port}", headers={"X-API-Key": KEY}, timeout=60) as c:
        for name, (messages, metadata) in REFUSED_ADDS.items():
            for infer in (False, True):
                body = {"messages": [{"role": "user", "content": messages}], "user_id": user, "metadata": metadata, "infer": infer}
                answer = c.post("/memories", json=body)
                assert answer.status_code == 400, (name, answer.text)
                # deeper than a whole request may nest (REQUEST_DEPTH): refused before the parser, naming the depth rules
                guard = L.too_deep_request(json.dumps(body).encode())
                said = str(guard) if guard is not None else expected[name]
                assert answer.json() == {"detail": said, "error": "LimitExceededError"}, name
        answer = c.post("/search", json={"query": LONG_QUERY, "user_id": user})
        assert answer.status_code == 400 and answer.json()["detail"] == expected["query"]
        deep = nest(L.METADATA_DEPTH)
        added = c.post("/memories", json={"messages": [{"role": "user", "content": "tea"}], "user_id": user, "metadata": deep,
                                          "infer": False})
        assert added.status_code == 200, added.text
        memory_id = added.json()["results"][0]["id"]
        answer = c.put(f"/memories/{memory_id}", json={"text": LONG_TEXT})
        assert answer.status_code == 400 and answer.json()["detail"] == expected["update"]
        assert c.put(f"/memories/{memory_id}", json={"text": "t" * L.UPDATE_CHARS}).status_code == 200
        # the value at the limit reads back through every read of the user
        listed = c.get("/memories", params={"user_id": user}).json()["results"]
        assert [(m["memory"], m["metadata"]) for m in listed] == [("t" * L.UPDATE_CHARS, deep)]
        assert c.post("/search", json={"query": "t" * L.QUERY_CHARS, "user_id": user}).json()["results"][0]["metadata"] == deep
        assert c.get("/ui/api/memories", params={"user_id": user}).json()["results"][0]["metadata"] == deep
        exported = c.get("/ui/api/export", params={"user_id": user})
        assert exported.status_code == 200 and exported.json()["memories"][0]["metadata"] == deep
        # a lone surrogate in a filter is refused, as search refuses it
        bad = c.get("/ui/api/memories", params={"user_id": user, "filters": '{"k": "\\ud800"}'})
        assert bad.status_code == 400 and "surrogate" in bad.json()["detail"], bad.text
        bad = c.post("/search", content=b'{"query": "tea", "user_id": "%s", "filters": {"k": "\\ud800"}}' % user.encode(),
                     headers={"content-type": "application/json"})
        assert bad.status_code == 400 and "surrogate" in bad.json()["detail"], bad.text
    assert llm.calls() == 0
    assert "Traceback" not in (folder / "rest.log").read_text(errors="replace")


#: the MCP SDK's client cannot send metadata 300 levels deep (its own serialiser stops near 255 levels)
MCP_ADDS = [name for name in REFUSED_ADDS if name != "metadata depth 300"]


def _mcp_expected(expected: dict[str, str]) -> dict[str, str]:
    return {k: f"LimitExceededError: {v}" for k, v in expected.items() if k != "metadata depth 300"}


def _tool_error(result: Any) -> str:
    """A tool error's text without the SDK's "Error executing tool <name>: " prefix."""
    assert result.is_error
    text = result.content[0].text
    return text.split(": ", 1)[1] if text.startswith("Error executing tool ") else text


async def _refusals(client: Client, scope: dict[str, str]) -> dict[str, str]:
    """The tool error of each refused input."""
    out = {}
    for name in MCP_ADDS:
        messages, metadata = REFUSED_ADDS[name]
        result = await client.call_tool("add_memory", {"messages": messages, "metadata": metadata, "infer": False, **scope})
        out[name] = _tool_error(result)
    out["query"] = _tool_error(await client.call_tool("search_memory", {"query": LONG_QUERY, **scope}))
    added = await client.call_tool("add_memory", {"messages": "tea", "infer": False, **scope})
    memory_id = (added.structured_content or json.loads(added.content[0].text))["results"][0]["id"]
    out["update"] = _tool_error(await client.call_tool("update_memory", {"memory_id": memory_id, "text": LONG_TEXT, **scope}))
    listed = await client.call_tool("get_memories", scope)
    listed_body = listed.structured_content or json.loads(listed.content[0].text)
    assert [m["memory"] for m in listed_body["results"]] == ["tea"]  # nothing else written
    return out


def test_mcp_stdio_refuses_what_python_refuses(world):
    folder, llm, expected = world
    user = f"u-{uuid.uuid4().hex[:6]}"
    params = StdioServerParameters(command=sys.executable,
                                   args=graphmem_command("mcp", "--user", user, "--config", _config(folder, "stdio", llm))[1:])

    async def main() -> dict[str, str]:
        async with Client(params, read_timeout_seconds=60) as client:
            return await _refusals(client, {})

    assert asyncio.run(main()) == _mcp_expected(expected)


def test_mcp_http_refuses_what_python_refuses(world):
    folder, llm, expected = world
    port = free_port()
    args = graphmem_command("mcp", "--http", "--scope-per-call", "--keys", str(folder / "keys.json"), "--port", str(port),
                            "--config", _config(folder, "mcp-http", llm))
    user = f"u-{uuid.uuid4().hex[:6]}"

    async def main() -> dict[str, str]:
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {KEY}"})
        async with Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http), read_timeout_seconds=60) as client:
            return await _refusals(client, {"user_id": user})

    with running(args, f"http://127.0.0.1:{port}/health", folder / "mcp-http.log"):
        assert asyncio.run(main()) == _mcp_expected(expected)


def test_import_refuses_what_python_refuses(world):
    folder, llm, expected = world
    user = f"u-{uuid.uuid4().hex[:6]}"
    lines = [{"messages": messages, "user_id": user, "metadata": metadata} for messages, metadata in REFUSED_ADDS.values()]
    lines.append({"messages": "kept", "user_id": user, "metadata": nest(L.METADATA_DEPTH)})
    source = folder / "import.jsonl"
    source.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    for infer in ("--no-infer", "--infer"):
        done = subprocess.run(graphmem_command("import", str(source), infer, "--json", "--config", _config(folder, "import", llm)),
                              capture_output=True, text=True, timeout=300)
        assert done.returncode == 1, done.stderr
        result = json.loads(done.stdout)
        assert [f["error"] for f in result["failed"]] == [f"LimitExceededError: {expected[n]}" for n in REFUSED_ADDS]
        assert result["added"] + result["skipped"] == 1
    assert llm.calls() == 0
