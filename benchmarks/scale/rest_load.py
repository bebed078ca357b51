"""Load on ``graphmem serve``: concurrent clients adding and searching across many scopes on Neo4j.

Starts the real REST server (uvicorn, 127.0.0.1 only) on the Neo4j store, with graphmem's real
OpenAI client talking to the local ScriptedLLMServer (which answers like a good model, derived from
each message, so no two adds share a fact), then runs ``--clients`` concurrent httpx clients for
``--requests`` requests in all (bounded, and stopped after ``--max-seconds``): each request is an
add (infer=True, LLM stages and all) or a search of a random scope among ``--scopes``. Several adds
of one scope name the same entities at the same moment, which is where twins or lost facts would
appear. Afterwards it checks, through the public API and the store contract:
  errors      responses that were not 200
  duplicates  entities of one scope sharing a canonical name (the store's entities(scope))
  lost adds   facts an add reported (event ADD) that GET /memories does not hold
and prints requests/s and p50/p95 latency per route. A benchmark: figures are printed, not asserted.

    python -m benchmarks.scale.rest_load --neo4j-url bolt://127.0.0.1:7687 [--clients 16 --scopes 50 --requests 1000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx

from graphmem.server.access import hash_key
from graphmem.testing import ScriptedLLMServer
from graphmem.types import Scope, canonical_name

DIMS = 384
TOPICS = ["tennis", "Lisbon", "the cello", "Acme", "green tea", "Porto", "chess", "Denver"]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--neo4j-url", default="bolt://127.0.0.1:7687")
    p.add_argument("--clients", type=int, default=16)
    p.add_argument("--scopes", type=int, default=50)
    p.add_argument("--requests", type=int, default=1000, help="total requests (bounded)")
    p.add_argument("--search-share", type=float, default=0.5, help="share of requests that are searches")
    p.add_argument("--max-seconds", type=float, default=900.0, help="stop issuing requests after this")
    p.add_argument("--workers", type=int, default=16, help="engine threads of the server")
    p.add_argument("--seed", type=int, default=7)
    return p.parse_args(argv)


def answer(tool: str | None, body: dict) -> Any:
    """A good model's answers, derived from the message: 'I like <topic> (#n)'."""
    text = body["messages"][-1]["content"]
    if tool == "update_memory":  # keep what exists, add the new facts
        facts = json.loads(text.split("New facts:\n", 1)[1])
        return {"memory": [{"id": f"new{i}", "text": f, "event": "ADD"} for i, f in enumerate(facts)]}
    marker = next((line for line in text.splitlines() if "I like " in line), "")
    topic, _, number = marker.split("I like ", 1)[-1].partition(" (#")
    number = number.split(")")[0]
    if tool == "extract_facts":
        return {"facts": [f"Likes {topic}, note {number}"]}
    if tool == "extract_entities":
        return {"entities": [{"entity": "I", "entity_type": "person"}, {"entity": topic, "entity_type": "topic"}]}
    if tool == "establish_relationships":
        return {"relations": [{"source": "I", "relationship": "likes", "destination": topic}]}
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(folder: Path, llm_url: str, neo4j_url: str, admin_key: str, workers: int) -> tuple[subprocess.Popen, str]:
    config = {
        "llm": {"provider": "openai_compatible", "config": {"base_url": llm_url, "api_key": "k", "model": "scripted", "timeout": 60}},
        "embedder": {"provider": "hashing", "config": {"dims": DIMS}},
        "graph_store": {"provider": "neo4j", "config": {"url": neo4j_url}},
        "history_db_path": str(folder / "history.db"),
        "context": {"summary_every": 0},
    }
    (folder / "config.json").write_text(json.dumps(config))
    (folder / "keys.json").write_text(json.dumps({"keys": [{"name": "bench", "sha256": hash_key(admin_key), "admin": True}]}))
    port = free_port()
    log = open(folder / "server.log", "wb")  # noqa: SIM115 - closed with the process
    proc = subprocess.Popen([sys.executable, "-m", "graphmem.cli.main", "serve", "--config", str(folder / "config.json"),
                             "--keys", str(folder / "keys.json"), "--port", str(port), "--workers", str(workers)],
                            stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 120
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"server exited: {(folder / 'server.log').read_text()[-2000:]}")
        try:
            httpx.get(url + "/openapi.json", timeout=2)
            return proc, url
        except httpx.HTTPError:
            if time.monotonic() > deadline:
                raise SystemExit("server did not start") from None
            time.sleep(0.3)


async def run_load(url: str, key: str, args: argparse.Namespace, users: list[str]) -> dict[str, Any]:
    rng = random.Random(args.seed)
    plan = [("search" if rng.random() < args.search_share else "add", rng.choice(users), rng.choice(TOPICS), n)
            for n in range(args.requests)]
    queue: asyncio.Queue = asyncio.Queue()
    for item in plan:
        queue.put_nowait(item)
    latencies: dict[str, list[float]] = defaultdict(list)
    errors: list[str] = []
    added: dict[str, set[str]] = defaultdict(set)  # user -> facts the server reported as ADD
    stop_at = time.monotonic() + args.max_seconds

    async def client() -> None:
        async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Token {key}"}, timeout=120) as http:
            while not queue.empty() and time.monotonic() < stop_at:
                kind, user, topic, n = queue.get_nowait()
                started = time.perf_counter()
                if kind == "add":
                    body = {"messages": [{"role": "user", "content": f"I like {topic} (#{n})"}], "user_id": user}
                    response = await http.post("/memories", json=body)
                else:
                    response = await http.post("/search", json={"query": topic, "user_id": user, "limit": 10})
                latencies[kind].append(time.perf_counter() - started)
                if response.status_code != 200:
                    errors.append(f"{kind} {response.status_code} {response.text[:200]}")
                elif kind == "add":
                    added[user].update(r["memory"] for r in response.json()["results"] if r["event"] == "ADD")

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(args.clients)))
    wall = time.perf_counter() - started
    return {"latencies": latencies, "errors": errors, "added": added, "wall": wall}


def check(url: str, key: str, neo4j_url: str, users: list[str], added: dict[str, set[str]]) -> tuple[int, int]:
    from graphmem.stores.neo4j import Neo4jStore

    duplicates = lost = 0
    store = Neo4jStore(url=neo4j_url, embedding_dims=DIMS)
    try:
        with httpx.Client(base_url=url, headers={"Authorization": f"Token {key}"}, timeout=60) as http:
            for user in users:
                names = [canonical_name(e.name) for e in store.entities(Scope.of(user_id=user))]
                duplicates += len(names) - len(set(names))
                held = {m["memory"] for m in http.get("/memories", params={"user_id": user, "limit": 10000}).json()["results"]}
                lost += len(added.get(user, set()) - held)
    finally:
        store.close()
    return duplicates, lost


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000 if ordered else float("nan")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    run = uuid.uuid4().hex[:6]
    users = [f"load-{run}-{i}" for i in range(args.scopes)]
    key = "bench-" + uuid.uuid4().hex
    with ScriptedLLMServer() as llm, tempfile.TemporaryDirectory() as tmp:
        llm.set_handler(answer)
        proc, url = start_server(Path(tmp), llm.base_url, args.neo4j_url, key, args.workers)
        try:
            result = asyncio.run(run_load(url, key, args, users))
            duplicates, lost = check(url, key, args.neo4j_url, users, result["added"])
        finally:
            proc.terminate()
            proc.wait(30)
        llm_calls = llm.calls()
    lat = result["latencies"]
    done = sum(len(v) for v in lat.values())
    print(f"graphmem serve on Neo4j ({args.neo4j_url}), {args.clients} clients, {args.scopes} scopes, "
          f"{done} requests ({len(lat['add'])} adds with infer=True, {len(lat['search'])} searches), {llm_calls} LLM calls")
    print(f"errors: {len(result['errors'])}   duplicate entities: {duplicates}   lost adds: {lost}")
    print(f"throughput: {done / result['wall']:.1f} requests/s over {result['wall']:.1f} s")
    for kind in ("add", "search"):
        print(f"{kind:<7} p50 {percentile(lat[kind], 0.5):8.1f} ms   p95 {percentile(lat[kind], 0.95):8.1f} ms")
    for line in result["errors"][:5]:
        print("  error:", line)
    return 0 if not result["errors"] and not duplicates and not lost else 1


if __name__ == "__main__":
    raise SystemExit(main())
