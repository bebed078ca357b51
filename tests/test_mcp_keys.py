"""``graphmem mcp --http`` with the REST server's tenant keys (issue 33): the MCP SDK's real client
over streamable HTTP; a key reads and writes only its users, a request without a valid key is refused
(401 before any tool runs), per-call scopes need keys or an explicit --no-auth, and serving without
keys on a public interface is warned about."""

from __future__ import annotations

import asyncio
import json
import subprocess
import uuid
from typing import Any

import httpx
import pytest
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from servers import free_port, graphmem_command, running, write_config

from graphmem.server.access import hash_key
from graphmem.testing import ScriptedLLMServer

ANN_KEY = "key-ann-" + uuid.uuid4().hex
BOB_KEY = "key-bob-" + uuid.uuid4().hex
ADMIN_KEY = "key-ops-" + uuid.uuid4().hex


def _client(url: str, headers: dict[str, str] | None = None) -> Client:
    http = create_mcp_http_client(headers=headers or {})
    return Client(streamable_http_client(url, http_client=http), read_timeout_seconds=60)


async def _call(client: Client, tool: str, args: dict[str, Any]) -> tuple[bool, Any]:
    result = await client.call_tool(tool, args)
    if result.is_error:
        return False, result.content[0].text
    return True, result.structured_content if result.structured_content is not None else json.loads(result.content[0].text)


def _keys(folder, ann: str, bob: str) -> str:
    path = folder / "keys.json"
    path.write_text(json.dumps({"keys": [
        {"name": "ann-app", "sha256": hash_key(ANN_KEY), "users": [ann]},
        {"name": "bob-app", "sha256": hash_key(BOB_KEY), "user_prefixes": [bob]},
        {"name": "ops", "sha256": hash_key(ADMIN_KEY), "admin": True},
    ]}))
    return str(path)


@pytest.fixture
def llm():
    with ScriptedLLMServer() as s:
        yield s


def test_per_call_scopes_over_http_with_keys(tmp_path, llm):
    ann, bob = f"ann-{uuid.uuid4().hex[:6]}", f"bob-{uuid.uuid4().hex[:6]}"
    config = write_config(tmp_path, llm.base_url, "embedded")
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    args = graphmem_command("mcp", "--http", "--scope-per-call", "--keys", _keys(tmp_path, ann, bob), "--port", str(port),
                            "--config", str(config))

    async def main() -> None:
        async with _client(url, {"Authorization": f"Bearer {ANN_KEY}"}) as as_ann:
            ok, added = await _call(as_ann, "add_memory", {"messages": "ann likes tea", "infer": False, "user_id": ann})
            assert ok, added
            ann_id = added["results"][0]["id"]
            ok, text = await _call(as_ann, "get_memories", {"user_id": bob})
            assert not ok and "AccessDeniedError" in text and ann in text  # names what the key may use
            ok, text = await _call(as_ann, "add_memory", {"messages": "sneaky", "infer": False, "user_id": bob})
            assert not ok and "AccessDeniedError" in text
            ok, text = await _call(as_ann, "get_memories", {"agent_id": "helper"})  # a scope without a user
            assert not ok and "AccessDeniedError" in text
        async with _client(url, {"X-API-Key": BOB_KEY}) as as_bob:
            ok, added = await _call(as_bob, "add_memory", {"messages": "bob likes coffee", "infer": False, "user_id": bob})
            assert ok, added
            ok, text = await _call(as_bob, "get_memory", {"memory_id": ann_id, "user_id": bob})  # ann's id: not found
            assert not ok and "NotFoundError" in text
            ok, text = await _call(as_bob, "search_memory", {"query": "tea", "user_id": ann})
            assert not ok and "AccessDeniedError" in text
            ok, found = await _call(as_bob, "get_memories", {"user_id": bob})
            assert ok and [m["memory"] for m in found["results"]] == ["bob likes coffee"]
        async with _client(url, {"Authorization": f"Token {ADMIN_KEY}"}) as admin:
            for user, text in ((ann, "ann likes tea"), (bob, "bob likes coffee")):
                ok, found = await _call(admin, "get_memories", {"user_id": user})
                assert ok and [m["memory"] for m in found["results"]] == [text]

    with running(args, f"http://127.0.0.1:{port}/health", tmp_path / "mcp.log"):
        asyncio.run(main())
        for headers in ({}, {"Authorization": "Bearer wrong"}, {"X-API-Key": "wrong"}):  # refused before any tool
            response = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                                  headers={**headers, "Accept": "application/json, text/event-stream"})
            assert response.status_code == 401 and response.json()["error"] == "Unauthorized", response.text
            assert response.headers["www-authenticate"] == "Bearer"
        with pytest.raises(Exception):  # noqa: B017,PT011 - the SDK's client fails on the 401 (its error type is the SDK's)
            asyncio.run(_list_tools(url, {"Authorization": "Bearer wrong"}))
        assert httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200  # no key needed
    log = (tmp_path / "mcp.log").read_text(errors="replace")
    assert "3 keys" in log and ANN_KEY not in log and "wrong" not in log
    assert "tool get_memories AccessDeniedError" in log


async def _list_tools(url: str, headers: dict[str, str]) -> None:
    async with _client(url, headers) as client:
        await client.list_tools()


def test_a_fixed_scope_with_keys_serves_only_keys_bound_to_it(tmp_path, llm):
    ann, bob = f"ann-{uuid.uuid4().hex[:6]}", f"bob-{uuid.uuid4().hex[:6]}"
    config = write_config(tmp_path, llm.base_url, "embedded")
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    args = graphmem_command("mcp", "--http", "--user", ann, "--keys", _keys(tmp_path, ann, bob), "--port", str(port),
                            "--config", str(config))

    async def main() -> None:
        async with _client(url, {"X-API-Key": ANN_KEY}) as as_ann:
            ok, added = await _call(as_ann, "add_memory", {"messages": "ann likes tea", "infer": False})
            assert ok, added
        async with _client(url, {"X-API-Key": BOB_KEY}) as as_bob:
            ok, text = await _call(as_bob, "get_memories", {})
            assert not ok and "AccessDeniedError" in text and "tea" not in text

    with running(args, f"http://127.0.0.1:{port}/health", tmp_path / "mcp.log"):
        asyncio.run(main())


def test_no_auth_serves_per_call_scopes_and_warns_off_loopback(tmp_path, llm):
    config = write_config(tmp_path, llm.base_url, "embedded")
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    args = graphmem_command("mcp", "--http", "--scope-per-call", "--no-auth", "--host", "0.0.0.0", "--port", str(port),
                            "--config", str(config))

    async def main() -> None:
        async with _client(url) as client:
            ok, added = await _call(client, "add_memory", {"messages": "open house", "infer": False, "user_id": "anyone"})
            assert ok, added

    with running(args, f"http://127.0.0.1:{port}/health", tmp_path / "mcp.log"):
        asyncio.run(main())
    log = (tmp_path / "mcp.log").read_text(errors="replace")
    assert "WARNING: serving on 0.0.0.0 without keys" in log


@pytest.mark.parametrize("flags, message", [
    (["--http", "--scope-per-call"], "--keys FILE"),  # per-call scopes over HTTP without keys: refused
    (["--http", "--scope-per-call", "--keys", "k.json", "--no-auth"], "not both"),
    (["--user", "ann", "--keys", "k.json"], "apply to --http"),
    (["--user", "ann", "--no-auth"], "apply to --http"),
])
def test_mcp_key_flags_are_checked_before_serving(tmp_path, flags, message):
    done = subprocess.run(graphmem_command("mcp", *flags), capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode != 0 and message in done.stderr, done.stderr


def test_loopback_serves_without_keys_quietly(tmp_path, llm):
    config = write_config(tmp_path, llm.base_url, "embedded")
    port = free_port()
    args = graphmem_command("mcp", "--http", "--scope-per-call", "--no-auth", "--port", str(port), "--config", str(config))
    with running(args, f"http://127.0.0.1:{port}/health", tmp_path / "mcp.log"):
        pass
    assert "WARNING" not in (tmp_path / "mcp.log").read_text(errors="replace")
