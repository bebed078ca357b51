"""graphmem against the REAL mem0ai 1.0.11 graph memory, on one Neo4j 5.26, one scripted LLM, one embedder.

mem0 runs in its own virtualenv (``.bench/mem0-venv``, made by ``--setup``: ``pip install
'mem0ai[graph]==1.0.11'``) as a subprocess (benchmarks/peers/mem0_worker.py), in its default mode (no base
label: nodes labelled by entity type only, every user-scoped lookup is an unlabelled match) and with
``base_label`` (``__Entity__``). graphmem runs in this process on the same server. Both talk over HTTP
to graphmem's ScriptedLLMServer, which answers each tool with the same extraction (scripted per
message, benchmarks/cost/add_script.py, in each engine's tool schema) after ``--latency`` seconds, and
serves ``/v1/embeddings`` (deterministic hashed vectors) to both: LLM and embedding calls are counted
by the server. Statements: graphmem's ``store.round_trips``; mem0's ``Neo4jGraph.query`` calls.
Database time, per operation, both engines alike: server ms, what Neo4j reported for each statement
(result_available_after + result_consumed_after: planning and execution, not commits), and driver
ms, the time inside the Neo4j driver (sending, waiting, commits, decoding; graphmem's scope lock is
counted for its statements and its release, not for the time it is held).

What is compared: graphmem's full ``Memory.add`` (facts, memory update, graph) against mem0's graph
memory (``MemoryGraph.add``: entities, relations, deletions; mem0's vector pipeline is not run), and
``Memory.search`` against ``MemoryGraph.search`` (LLM entity extraction, one embedding and one
statement per entity, BM25 top-5).

With ``--population N`` the database first receives N synthetic users (benchmarks/data/scale_data.py:
100 entities, their relations and 20 memories each) for each engine, stored the way each stores them
(graphmem through ``Neo4jStore.write_many``; mem0 in its default and its base_label node shapes,
benchmarks/peers/cypher/mem0_population.cypher, as mem0's own writes leave them), so every operation runs
on a database of that size: mem0's default mode matches users' nodes without a label.

    python -m benchmarks.peers.mem0_compare --setup --bolt-port 7631 --http-port 7431 --latency 0 0.4
    python -m benchmarks.peers.mem0_compare --population 1000 --latency 0 0.4
    # mem0 beside search_scale's 1,010,000 graphmem entities: 10,000 users x 100 entities per mem0 shape
    python -m benchmarks.peers.mem0_compare --neo4j-url bolt://127.0.0.1:7702 --population 10000 --population-engines mem0 --latency 0 0.4
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.cost.add_script import SCRIPT, USER, Step
from graphmem import Memory
from graphmem.embeddings import HashingEmbedder
from graphmem.testing import ScriptedLLMServer

VENV = common.REPO_ROOT / ".bench" / "mem0-venv"
WORKER = Path(__file__).resolve().parent / "mem0_worker.py"
MEM0 = "mem0ai[graph]==1.0.11"
DIMS = 384
POPULATION_BATCH = 20  # synthetic users per loading transaction (2,000 entities)
QUERIES = [("Where does {u} live?", [("{u}", "person")]), ("What pets does {u} have?", [("{u}", "person")]),
           ("Who is Ana?", [("Ana", "person")]), ("What sport does {u} play?", [("{u}", "person"), ("tennis", "sport")])]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.peers.mem0_compare", description=__doc__.split("\n\n")[0])
    p.add_argument("--setup", action="store_true", help=f"create {VENV} with {MEM0} if missing")
    p.add_argument("--users", type=int, default=3)
    p.add_argument("--steps", type=int, default=12, help="scripted messages per user (adds = users x steps)")
    p.add_argument("--latency", type=float, nargs="+", default=[0.0], help="LLM seconds per request, one run each")
    p.add_argument("--population", type=int, default=0, help="synthetic users (100 entities each) per engine shape loaded first")
    p.add_argument("--population-engines", nargs="+", default=["graphmem", "mem0"], choices=["graphmem", "mem0"],
                   help="whose shapes the population is loaded in (graphmem only on a database that holds graphmem's "
                        "users already, e.g. search_scale's)")
    p.add_argument("--keep-population", action="store_true", help="leave the population in --neo4j-url after the run")
    p.add_argument("--neo4j-url", default=None)
    p.add_argument("--bolt-port", type=int, default=7691)
    p.add_argument("--http-port", type=int, default=7479)
    p.add_argument("--out", default=None)
    return p.parse_args(argv)


def setup_venv() -> None:
    if not (VENV / "bin" / "python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(VENV / "bin" / "pip"), "install", "-q", MEM0], check=True)


def load_population(url: str, users: int, engines: tuple[str, ...] = ("graphmem", "mem0")) -> dict[str, Any]:
    """``users`` synthetic users per engine shape (graphmem, mem0 default, mem0 base_label) of ``engines``."""
    import neo4j

    from benchmarks.data.scale_data import Spec, generate_user, writes
    from graphmem.stores.neo4j import Neo4jStore

    spec = Spec(users=users, entities_per_user=100, heavy_entities=0, seed=7, dims=DIMS)
    text = (Path(__file__).resolve().parent / "cypher" / "mem0_population.cypher").read_text()
    started = time.perf_counter()
    store = Neo4jStore(url=url, embedding_dims=DIMS)
    store.setup()
    with neo4j.GraphDatabase.driver(url, auth=None) as driver:
        for first in range(0, users, POPULATION_BATCH):  # one transaction per engine shape per batch of users
            batch = range(first, min(users, first + POPULATION_BATCH))
            # the same data for every engine: user index i
            if "graphmem" in engines:
                store.write_many([w for i in batch for w in writes(generate_user(spec, f"popg-{i}"), with_memories=True)])
            for shape, base_label in (("popd", False), ("popb", True)) if "mem0" in engines else ():
                rows = [mem0_row(generate_user(spec, f"{shape}-{i}")) for i in batch]
                driver.execute_query(text, {"users": rows, "base_label": base_label})
            print(f"  population: {batch.stop}/{users} users per engine, {time.perf_counter() - started:.0f} s", file=sys.stderr)
        records, _, _ = driver.execute_query("MATCH (n) RETURN count(n) AS nodes")
    store.close()
    return {"users_per_engine": users, "engines": list(engines), "nodes": records[0]["nodes"],
            "load_s": round(time.perf_counter() - started, 1)}


def mem0_row(u: Any) -> dict[str, Any]:
    return {"user_id": u.user_id, "names": u.names, "types": u.types, "embeddings": u.vectors.tolist(),
            "relations": [{"s": a, "type": t, "d": b} for a, t, b in u.relations]}


def drop_population(url: str) -> None:
    import neo4j

    with neo4j.GraphDatabase.driver(url, auth=None) as driver, driver.session() as session:
        session.run("MATCH (n) WHERE n.user_id STARTS WITH 'pop' OR n.scope STARTS WITH 'pop' "
                    "CALL (n) { DETACH DELETE n } IN TRANSACTIONS OF 5000 ROWS").consume()


def norm(text: str) -> str:
    return text.casefold().replace(" ", "_")


class SharedModel:
    """One extraction per message, answered in the schema of whichever engine asks (by the tool's
    parameters: mem0's relations come under "entities", its deletions as one tool call each)."""

    def __init__(self) -> None:
        self.step: Step = SCRIPT[0]
        self.user = USER
        self.entities: list[tuple[str, str]] = []

    def name(self, n: str) -> str:
        return self.user if n == USER else n

    def __call__(self, tool: str | None, body: dict) -> Any:
        s = self.step
        props = json.dumps(body.get("tools") or [])
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        if tool == "extract_entities":
            return {"entities": [{"entity": self.name(n), "entity_type": t} for n, t in self.entities]}
        if tool in ("establish_relationships", "establish_relations"):
            rel = [{"source": self.name(a), "relationship": r, "destination": self.name(b)} for a, r, b in s.relations]
            return {"entities": rel} if '"relations"' not in props else {"relations": rel}
        if tool == "delete_graph_memory":
            shown = norm(prompt)
            hits = [{"source": self.name(a), "relationship": r, "destination": self.name(b)} for a, r, b in s.retire
                    if f"{norm(self.name(a))}_--_{norm(r)}_--_{norm(self.name(b))}" in shown]
            return {"relations": hits} if '"relations"' in props else hits
        if tool == "extract_facts":
            return {"facts": s.facts}
        if tool == "update_memory":
            match = re.search(r"Existing memories:\n(.*?)\n\nNew facts:\n", prompt, re.S)
            existing = json.loads(match.group(1)) if match else []
            return {"memory": [{"id": m["id"], "text": m["text"], "event": "NONE"} for m in existing]
                    + [{"id": str(len(existing) + i), "text": f, "event": "ADD"} for i, f in enumerate(s.facts)]}
        if tool == "summarize":
            return {"summary": "A user talks about life, moves and pets."}
        return None


def scripted_models(server: ScriptedLLMServer) -> dict[str, Any]:
    """mem0's llm and embedder config, both at the scripted server."""
    openai = {"model": "scripted", "api_key": "scripted", "openai_base_url": server.base_url}
    return {"llm": {"provider": "openai", "config": {**openai, "temperature": 0}},
            "embedder": {"provider": "openai", "config": {**openai, "model": "text-embedding-3-small", "embedding_dims": DIMS}}}


class WorkerProcess:
    """A mem0 worker script in the mem0 virtualenv, given ``config``; one JSON command per line in,
    one JSON answer per line out (other output lines are skipped)."""

    def __init__(self, worker: Path, config: dict[str, Any]) -> None:
        self.proc = subprocess.Popen([str(VENV / "bin" / "python"), str(worker), json.dumps(config)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, text=True, env={"MEM0_TELEMETRY": "False", "PATH": "/usr/bin:/bin"})
        self.ready = self.read()

    def read(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"mem0 worker exited ({self.proc.wait()})")
            if line.startswith("{"):
                return json.loads(line)

    def call(self, **cmd: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return self.read()

    def close(self) -> None:
        if self.proc.stdin:
            self.proc.stdin.close()
        self.proc.wait(timeout=120)


class Mem0Worker(WorkerProcess):
    def __init__(self, url: str, server: ScriptedLLMServer, base_label: bool) -> None:
        config = {**scripted_models(server),
                  "graph_store": {"provider": "neo4j", "config": {"url": url, "username": "neo4j", "password": "auth-disabled",
                                                                    "base_label": base_label}},
                  "history_db_path": str(Path(tempfile.gettempdir()) / "mem0-compare-history.db")}
        super().__init__(WORKER, config)


def graphmem_engine(url: str, server: ScriptedLLMServer, workdir: Path) -> tuple[Any, Any]:
    from graphmem.embeddings.openai import OpenAIEmbedder
    from graphmem.stores.neo4j import Neo4jStore

    embedder = OpenAIEmbedder(model="text-embedding-3-small", api_key="scripted", base_url=server.base_url, dims=DIMS)
    store = Neo4jStore(url=url, embedding_dims=DIMS)
    config = {"llm": {"provider": "openai_compatible", "config": {"base_url": server.base_url, "api_key": "scripted", "model": "scripted"}},
              "history_db_path": str(workdir / "history.db")}
    memory = Memory(config, store=store, embedder=embedder)
    return memory, store


def run_engine(engine: str, url: str, server: ScriptedLLMServer, model: SharedModel, args: argparse.Namespace,
               workdir: Path, tag: str) -> dict[str, Any]:
    memory = store = worker = None
    if engine == "graphmem":
        memory, store = graphmem_engine(url, server, workdir)
    else:
        worker = Mem0Worker(url, server, base_label=engine == "mem0 base_label")
    users = [f"u{tag}{engine.replace(' ', '')[:9]}{i}" for i in range(args.users)]
    ops: dict[str, list[dict[str, Any]]] = {"add": [], "search": []}

    def measure(kind: str, fn: Any, record: bool = True) -> None:
        llm, emb = len(server.requests), server.embedding_calls
        trips = store.round_trips if store is not None else 0
        db = (store.server_ms, store.driver_ms) if store is not None else (0.0, 0.0)
        started = time.perf_counter()
        out = fn()
        wall = (time.perf_counter() - started) * 1000  # graphmem's rolling summary runs in the background, as by default
        if not record:
            return
        if worker:
            written = out.get("added", len(out.get("hits", [])))
        else:
            written = len(out.get("relations", [])) if kind == "add" else len(out.get("relations", []) or out.get("results", []))
        ops[kind].append({"llm_calls": len(server.requests) - llm, "embedding_calls": server.embedding_calls - emb,
                          "statements": out["statements"] if worker else store.round_trips - trips,
                          "server_ms": out["server_ms"] if worker else round(store.server_ms - db[0], 2),
                          "driver_ms": out["driver_ms"] if worker else round(store.driver_ms - db[1], 2),
                          "wall_ms": round(out["wall_ms"] if worker else wall, 2), "relations_or_hits": written})

    def add(user: str, step: Step, record: bool = True) -> None:
        model.step, model.user, model.entities = step, user, step.entities
        if worker:
            measure("add", lambda: worker.call(op="add", text=step.text, user_id=user), record)
        else:
            measure("add", lambda: memory.add(step.text, user_id=user, timestamp=step.at), record)

    def search(user: str, query: str, entities: list[tuple[str, str]], record: bool = True) -> None:
        model.user, model.entities = user, [(n.format(u=USER), t) for n, t in entities]
        q = query.format(u=user)
        if worker:
            measure("search", lambda: worker.call(op="search", query=q, user_id=user), record)
        else:
            measure("search", lambda: memory.search(q, user_id=user, limit=5), record)

    warmup = f"{users[0]}w"  # first scope, query plans, connections: warmed on a scope of its own, not reported
    users_done = [warmup]

    try:
        for step in SCRIPT[:2]:
            add(warmup, step, record=False)
        search(warmup, *QUERIES[0], record=False)
        users_done += users
        for step in SCRIPT[: args.steps]:
            for user in users:
                add(user, step)
        for query, entities in QUERIES:
            for user in users:
                search(user, query, entities)
    finally:
        for user in users_done:
            if worker:
                worker.call(op="delete_all", user_id=user)
            elif memory is not None:
                memory.delete_all(user_id=user)
        if worker:
            worker.close()
        if memory is not None:
            memory.close()
    return {"engine": engine, "adds": ops["add"], "searches": ops["search"], "summary": {k: summarise(v) for k, v in ops.items()}}


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    n = len(rows)
    pct = common.percentiles([r["wall_ms"] for r in rows], (50, 95))
    keys = ("llm_calls", "embedding_calls", "statements", "server_ms", "driver_ms")
    return {"n": n, **{k: round(sum(r[k] for r in rows) / n, 2) for k in keys},
            "wall_p50_ms": pct["p50"], "wall_p95_ms": pct["p95"]}


def print_run(run: dict[str, Any]) -> None:
    print(f"\nLLM latency {run['latency_s'] * 1000:.0f} ms per request")
    base = {e["engine"]: e["summary"] for e in run["engines"]}["graphmem"]
    for kind in ("add", "search"):
        rows = []
        for e in run["engines"]:
            s = e["summary"][kind]
            rows.append([e["engine"], s["n"], s["llm_calls"], s["embedding_calls"], s["statements"], s["server_ms"],
                         s["driver_ms"], s["wall_p50_ms"], s["wall_p95_ms"], ratio(s["server_ms"], base[kind]["server_ms"]),
                         ratio(s["driver_ms"], base[kind]["driver_ms"]), ratio(s["wall_p50_ms"], base[kind]["wall_p50_ms"])])
        print(f"per {kind} (means; wall p50/p95; ratios: engine / graphmem)")
        print(common.table(["engine", "n", "LLM calls", "embed calls", "statements", "server ms", "driver ms",
                            "wall p50 ms", "wall p95 ms", "server ratio", "driver ratio", "wall p50 ratio"], rows))


def ratio(a: float | None, b: float | None) -> float | None:
    return round(a / b, 2) if a and b else None


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.setup:
        setup_venv()
    if not (VENV / "bin" / "python").exists():
        print(f"{VENV} is missing: run with --setup", file=sys.stderr)
        return 2
    private = None if args.neo4j_url else common.PrivateNeo4j(args.bolt_port, args.http_port, None)
    url = args.neo4j_url or private.uri
    hashing = HashingEmbedder(dims=DIMS)
    runs: list[dict[str, Any]] = []
    population = load_population(url, args.population, tuple(args.population_engines)) if args.population else None
    if population:
        print(f"population: {population}")
    try:
        with tempfile.TemporaryDirectory(prefix="graphmem-mem0cmp-") as tmp:
            for latency in args.latency:
                model = SharedModel()
                with ScriptedLLMServer(latency=latency, embedder=lambda texts, dims: hashing.embed(texts)) as server:
                    server.set_handler(model)
                    tag = str(int(time.time()) % 100000)
                    engines = [run_engine(e, url, server, model, args, Path(tmp), tag)
                               for e in ("graphmem", "mem0 base_label", "mem0 default")]
                runs.append({"latency_s": latency, "engines": engines})
                print_run(runs[-1])
        version = common.neo4j_server_version(url)
    finally:
        if population and args.neo4j_url and not args.keep_population:
            drop_population(url)
        if private is not None:
            private.stop()
    mem0_version = subprocess.run([str(VENV / "bin" / "python"), "-c", "import importlib.metadata as m; print(m.version('mem0ai'))"],
                                  capture_output=True, text=True).stdout.strip()
    path = common.write_result("mem0_compare", {
        "machine": common.machine_info(version), "versions": {**common.package_versions(), "mem0ai": mem0_version},
        "commit": common.git_commit(), "parameters": {k: v for k, v in vars(args).items() if k != "out"}, "population": population, "runs": runs}, args.out)
    print(f"\nwritten {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
