"""Can a tenant tell another tenant's memory ids from unknown ids by how long the answer takes?

For each store (embedded, neo4j) and door (REST ``GET /memories/{id}`` and ``/history``, MCP
``get_memory`` over streamable HTTP), the real server process is started with two tenant keys; bob's
memories are added through the door, then alice's key asks for N pairs of ids, interleaved: one of
bob's real ids and one random id (a uuid4, the shape of a real one), in random order within the
pair. Both must answer "not found"; the benchmark checks they do, and prints per door and store the
median times and the paired z of the difference (real - random): mean / standard error. |z| of 2-3
is noise on a shared machine; a door that loads the memory before judging its owner shows z of
10 and more (issue 45: MCP on Neo4j, z = 12.7 / 3.7 / 10.2 before ownership moved into the lookup).

    python -m benchmarks.faults.tenant_timing --neo4j-url bolt://127.0.0.1:7687 [--pairs 500] [--stores embedded,neo4j]
    python -m benchmarks.faults.tenant_timing --source /path/to/other/checkout   # the servers run that code

A benchmark: figures are printed (and written to benchmarks/results/tenant_timing.json), not asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from benchmarks.common import table, write_result
from benchmarks.faults import checkout_env
from graphmem.server.access import hash_key
from graphmem.testing import ScriptedLLMServer

ALICE_KEY, BOB_KEY = "ka-" + uuid.uuid4().hex, "kb-" + uuid.uuid4().hex
Ask = Callable[[str], Awaitable[bool]]  # asks for one id; True when the answer was "not found"


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _config(folder: Path, llm_url: str, store: str, neo4j_url: str | None, dims: int) -> Path:
    graph = ({"provider": "neo4j", "config": {"url": neo4j_url}} if store == "neo4j"
             else {"provider": "embedded", "config": {"path": str(folder / "graph")}})
    config = {"llm": {"provider": "openai_compatible", "config": {"base_url": llm_url, "api_key": "k", "model": "scripted"}},
              "embedder": {"provider": "hashing", "config": {"dims": dims}}, "graph_store": graph,
              "history_db_path": str(folder / "history.db"), "context": {"summary_every": 0}}
    path = folder / "config.json"
    path.write_text(json.dumps(config))
    return path


@contextmanager
def _server(args: list[str], health: str, log: Path, source: str | None) -> Iterator[None]:
    env = {**(checkout_env(source) if source else os.environ), "PYTHONUNBUFFERED": "1"}
    with open(log, "wb") as out:
        # in the source folder: ``python -m`` puts the working folder first on sys.path, before PYTHONPATH
        proc = subprocess.Popen([sys.executable, "-m", "graphmem.cli.main", *args], stdout=out, stderr=subprocess.STDOUT,
                                env=env, cwd=source or None)
    try:
        deadline = time.monotonic() + 300  # a loaded machine starts a Neo4j-backed server slowly
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited: {log.read_text(errors='replace')[-2000:]}")
            try:
                httpx.get(health, timeout=2)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"no answer at {health}") from None
                time.sleep(0.2)
        yield
    finally:
        proc.terminate()
        proc.wait(30)


async def _pairs(ask: Ask, real: list[str], pairs: int, warmup: int, rng: random.Random) -> dict[str, Any]:
    """Times of interleaved (real, random) pairs; warm-up pairs are dropped."""
    times: dict[str, list[float]] = {"real": [], "random": []}
    for i in range(warmup + pairs):
        order = [("real", real[i % len(real)]), ("random", str(uuid.uuid4()))]
        rng.shuffle(order)
        for kind, memory_id in order:
            started = time.perf_counter()
            refused = await ask(memory_id)
            elapsed = (time.perf_counter() - started) * 1000
            if not refused:
                raise AssertionError(f"{kind} id {memory_id} was not answered as not found")
            if i >= warmup:
                times[kind].append(elapsed)
    return _stats(times["real"], times["random"])


def _secret(i: int, rng: random.Random, chars: int) -> str:
    """One of bob's memories, ``chars`` long: a long one costs more to load, so a door that loads it
    before judging its owner shows it more plainly (a prober would pick such ids)."""
    head = f"bob's secret number {i} is {rng.random()}. "
    return (head + "lorem ipsum dolor sit amet " * (chars // 27 + 1))[:max(chars, len(head))]


def _stats(real: list[float], rand: list[float]) -> dict[str, Any]:
    diffs = [a - b for a, b in zip(real, rand, strict=True)]
    se = statistics.stdev(diffs) / len(diffs) ** 0.5
    return {"pairs": len(diffs), "real_ms_p50": statistics.median(real), "random_ms_p50": statistics.median(rand),
            "mean_diff_ms": statistics.fmean(diffs), "z": statistics.fmean(diffs) / se if se else 0.0}


def _rest(base: str, args: argparse.Namespace, rng: random.Random) -> dict[str, dict[str, Any]]:
    bob = f"bob-{uuid.uuid4().hex[:8]}"
    with httpx.Client(base_url=base, headers={"X-API-Key": BOB_KEY}, timeout=180) as c:
        real = [c.post("/memories", json={"messages": [{"role": "user", "content": _secret(i, rng, args.text_chars)}],
                                          "user_id": bob, "infer": False}).json()["results"][0]["id"]
                for i in range(args.memories)]
    out = {}
    for route in ("/memories/{}", "/memories/{}/history"):
        async def run(route: str = route) -> dict[str, Any]:
            async with httpx.AsyncClient(base_url=base, headers={"X-API-Key": ALICE_KEY}, timeout=60) as c:
                async def ask(memory_id: str) -> bool:
                    answer = await c.get(route.format(memory_id))
                    return answer.status_code == 404 and answer.json().get("error") in ("NotFoundError", None)
                return await _pairs(ask, real, args.pairs, args.warmup, rng)
        out["REST GET " + route.format("{id}")] = asyncio.run(run())
    return out


def _mcp(base: str, args: argparse.Namespace, rng: random.Random) -> dict[str, dict[str, Any]]:
    from mcp.client import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    bob, alice = f"bob-{uuid.uuid4().hex[:8]}", f"alice-{uuid.uuid4().hex[:8]}"

    def client(key: str) -> Client:
        return Client(streamable_http_client(f"{base}/mcp", http_client=create_mcp_http_client(headers={"X-API-Key": key})),
                      read_timeout_seconds=60)

    async def run() -> dict[str, Any]:
        async with client(BOB_KEY) as c:
            real = []
            for i in range(args.memories):
                added = await c.call_tool("add_memory", {"messages": _secret(i, rng, args.text_chars),
                                                         "infer": False, "user_id": bob})
                real.append((added.structured_content or json.loads(added.content[0].text))["results"][0]["id"])
        async with client(ALICE_KEY) as c:
            async def ask(memory_id: str) -> bool:
                result = await c.call_tool("get_memory", {"memory_id": memory_id, "user_id": alice})
                return bool(result.is_error) and "NotFoundError" in result.content[0].text
            return await _pairs(ask, real, args.pairs, args.warmup, rng)

    return {"MCP get_memory": asyncio.run(run())}


def _keys(folder: Path) -> Path:
    path = folder / "keys.json"
    path.write_text(json.dumps({"keys": [{"name": "alice-app", "sha256": hash_key(ALICE_KEY), "user_prefixes": ["alice-"]},
                                         {"name": "bob-app", "sha256": hash_key(BOB_KEY), "user_prefixes": ["bob-"]}]}))
    return path


def measure(store: str, args: argparse.Namespace, llm_url: str, rng: random.Random) -> dict[str, dict[str, Any]]:
    """Both doors on one store: each its own server process (an embedded store has one owner at a time)."""
    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="tenant-timing-") as tmp:
        for door in ("rest", "mcp"):
            folder = Path(tmp) / door
            folder.mkdir()
            config, keys, port = _config(folder, llm_url, store, args.neo4j_url, args.dims), _keys(folder), _free_port()
            base = f"http://127.0.0.1:{port}"
            command = (["serve"] if door == "rest" else ["mcp", "--http", "--scope-per-call"])
            command += ["--config", str(config), "--keys", str(keys), "--port", str(port)]
            with _server(command, f"{base}/health", folder / "server.log", args.source):
                results.update(_rest(base, args, rng) if door == "rest" else _mcp(base, args, rng))
    return results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--stores", default="embedded,neo4j", help="comma-separated: embedded, neo4j")
    p.add_argument("--neo4j-url", default=os.environ.get("GRAPHMEM_NEO4J_URI", "bolt://127.0.0.1:7687"))
    p.add_argument("--pairs", type=int, default=500, help="measured (real, random) pairs per door (default 500)")
    p.add_argument("--warmup", type=int, default=30, help="pairs dropped first (default 30)")
    p.add_argument("--memories", type=int, default=50, help="bob's memories, asked in turn (default 50)")
    p.add_argument("--text-chars", type=int, default=20_000, help="characters of each of bob's memories (default 20,000)")
    p.add_argument("--source", help="run the servers from this checkout (PYTHONPATH), e.g. to measure older code")
    p.add_argument("--dims", type=int, default=384, help="hashing embedder dimensions (a Neo4j database keeps its first)")
    p.add_argument("--seed", type=int, default=45)
    p.add_argument("--out", help="result JSON (default benchmarks/results/tenant_timing.json)")
    args = p.parse_args(argv)
    rng = random.Random(args.seed)
    rows, payload = [], {}
    with ScriptedLLMServer() as llm:
        for store in args.stores.split(","):
            measured = measure(store, args, llm.base_url, rng)
            payload[store] = measured
            rows += [[store, door, m["pairs"], round(m["real_ms_p50"], 2), round(m["random_ms_p50"], 2),
                      round(m["mean_diff_ms"], 3), round(m["z"], 2)] for door, m in measured.items()]
    print(table(["store", "door", "pairs", "real p50 ms", "random p50 ms", "mean diff ms", "z"], rows))
    write_result("tenant_timing", {"pairs": args.pairs, "text_chars": args.text_chars, "source": args.source or "this checkout", "results": payload}, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
