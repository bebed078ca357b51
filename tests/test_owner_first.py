"""Ownership before anything is loaded, in every door (issue 45 item 3): a read, change or history of
another tenant's memory by id never brings that memory out of the store or the history log. The
store's ``get_memory`` and the log's ``history`` are watched (wrapped to record what they return, the
database is the real one): asked by a tenant for another tenant's id, they must return nothing, as for
an unknown id, because the owners travel with the lookup (graphmem.server.owned). Before, the MCP
tools, the inspector's delete and every history route loaded the memory (or its rows) and judged it
after, which made another tenant's ids slower to answer than unknown ones (benchmarks/faults/tenant_timing.py).

Doors: REST and the inspector under uvicorn, MCP over streamable HTTP with keys (the official client),
and an MCP server with a fixed agent scope; both stores."""

from __future__ import annotations

import asyncio
import uuid
from typing import Any

import httpx
import pytest
from conftest import TEST_DIMS
from helpers import make_memory
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from servers import serving_in_thread

from graphmem.aio import AsyncMemory
from graphmem.server.access import Tenant, Tenants, hash_key
from graphmem.server.mcp import build_server
from graphmem.server.mcp_http import KeyGate
from graphmem.server.rest import create_app

ALICE_KEY, BOB_KEY = "ka-" + uuid.uuid4().hex, "kb-" + uuid.uuid4().hex


class Watched:
    """Records what the store's lookup by id and the history log's query returned."""

    def __init__(self, memory: Any) -> None:
        self.loaded: list[Any] = []
        store_get, log_history = memory.store.get_memory, memory.history_log.history

        def get_memory(memory_id: str, owners: Any = None) -> Any:
            item = store_get(memory_id, owners)
            self.loaded.append(item)
            return item

        def history(memory_id: str, owners: Any = None) -> Any:
            rows = log_history(memory_id) if owners is None else log_history(memory_id, owners)
            self.loaded.extend(rows)
            return rows

        memory.store.get_memory, memory.history_log.history = get_memory, history

    def owners_loaded(self) -> set[Any]:
        """The user of everything a lookup returned (an item or a history row)."""
        return {getattr(x, "user_id", None) if not isinstance(x, dict) else x.get("user_id") for x in self.loaded if x}




@pytest.fixture
def world(store, server, tmp_path):
    """alice (a tenant) and bob (another), one memory each; bob's memory changed once (two history rows)."""
    alice, bob = f"alice-{uuid.uuid4().hex[:8]}", f"bob-{uuid.uuid4().hex[:8]}"
    memory = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "history.db"))
    mine = memory.add("I like green tea", user_id=alice, agent_id="helper", infer=False)["results"][0]["id"]
    theirs = memory.add("bob's vault code is 7781", user_id=bob, agent_id="other", infer=False)["results"][0]["id"]
    memory.update(theirs, "bob's vault code is 7782")
    tenants = Tenants({hash_key(ALICE_KEY): Tenant("alice-app", frozenset({alice})),
                       hash_key(BOB_KEY): Tenant("bob-app", frozenset({bob}))})
    yield {"memory": memory, "alice": alice, "bob": bob, "mine": mine, "theirs": theirs, "tenants": tenants}
    memory.close()


def test_rest_and_inspector_never_load_another_tenants_memory(world):
    theirs, alice = world["theirs"], world["alice"]
    unknown = uuid.uuid4().hex
    watched = Watched(world["memory"])
    with serving_in_thread(create_app(AsyncMemory(memory=world["memory"]), world["tenants"])) as url, \
            httpx.Client(base_url=url, headers={"X-API-Key": ALICE_KEY}, timeout=30) as c:
        for memory_id in (theirs, unknown):
            answers = [c.get(f"/memories/{memory_id}"), c.put(f"/memories/{memory_id}", json={"text": "x"}),
                       c.delete(f"/memories/{memory_id}"), c.get(f"/memories/{memory_id}/history"),
                       c.delete("/ui/api/memory", params={"memory_id": memory_id, "user_id": alice}),
                       c.get("/ui/api/history", params={"memory_id": memory_id, "user_id": alice})]
            assert [a.status_code for a in answers] == [404] * 6, [a.text for a in answers]
            assert all(a.json()["error"] == "NotFoundError" for a in answers)
        assert watched.loaded and watched.owners_loaded() == set(), "another tenant's memory was loaded"
        # her own memory is served by the same path (and its rows were loaded: the watch sees reads)
        assert c.get(f"/memories/{world['mine']}").json()["memory"] == "I like green tea"
        assert c.get("/ui/api/history", params={"memory_id": world["mine"], "user_id": alice}).status_code == 200
        assert watched.owners_loaded() == {alice}
    assert world["memory"].get(theirs)["memory"] == "bob's vault code is 7782"  # nothing changed


def _mcp_client(url: str, key: str | None = None) -> Client:
    headers = {"X-API-Key": key} if key else {}
    return Client(streamable_http_client(f"{url}/mcp", http_client=create_mcp_http_client(headers=headers)),
                  read_timeout_seconds=60)


async def _tool_errors(client: Client, memory_id: str, scope: dict[str, str]) -> list[str]:
    out = []
    for tool, args in (("get_memory", {}), ("update_memory", {"text": "x"}), ("delete_memory", {})):
        result = await client.call_tool(tool, {"memory_id": memory_id, **args, **scope})
        assert result.is_error, (tool, result)
        out.append(result.content[0].text.replace(memory_id, "ID"))
    return out


def test_mcp_tools_never_load_another_tenants_memory(world):
    memory, alice, theirs = world["memory"], world["alice"], world["theirs"]
    watched = Watched(memory)
    app = KeyGate(build_server(AsyncMemory(memory=memory), None, world["tenants"]).streamable_http_app(
        streamable_http_path="/mcp", host="127.0.0.1"), world["tenants"])

    async def main(url: str) -> None:
        async with _mcp_client(url, ALICE_KEY) as client:
            other = await _tool_errors(client, theirs, {"user_id": alice})
            unknown = await _tool_errors(client, uuid.uuid4().hex, {"user_id": alice})
            assert other == unknown and all("NotFoundError" in e for e in other), other
            assert watched.loaded and watched.owners_loaded() == set(), "another tenant's memory was loaded"
            mine = await client.call_tool("get_memory", {"memory_id": world["mine"], "user_id": alice})
            assert not mine.is_error and watched.owners_loaded() == {alice}

    with serving_in_thread(app) as url:
        asyncio.run(main(url))
    assert memory.get(theirs)["memory"] == "bob's vault code is 7782"


def test_a_fixed_agent_scope_is_checked_in_the_lookup(world):
    """A server for agent "helper" (no user named): alice's helper memory is served, bob's memory of
    another agent is not even loaded."""
    memory = world["memory"]
    watched = Watched(memory)
    app = build_server(AsyncMemory(memory=memory), {"agent_id": "helper"}).streamable_http_app(
        streamable_http_path="/mcp", host="127.0.0.1")

    async def main(url: str) -> None:
        async with _mcp_client(url) as client:
            assert all("NotFoundError" in e for e in await _tool_errors(client, world["theirs"], {}))
            assert watched.owners_loaded() == set(), "a memory of another agent was loaded"
            mine = await client.call_tool("get_memory", {"memory_id": world["mine"]})
            assert not mine.is_error, mine

    with serving_in_thread(app) as url:
        asyncio.run(main(url))
