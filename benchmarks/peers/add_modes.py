"""graphmem's two add modes (staged, single_pass) beside the REAL mem0ai 1.0.11 ``Memory`` (facts in a
local Qdrant plus the Neo4j graph, both pipelines in parallel), on one Neo4j, one scripted model.

Every engine talks over HTTP to one ScriptedLLMServer that answers the same extraction per message
(benchmarks/cost/add_script.py) in each engine's schema (tool calls; mem0's JSON-mode fact and update
requests as message text) after ``--latency`` seconds, and serves ``/v1/embeddings``. The server counts,
the same way for every engine, chat requests, embedding requests, and prompt / completion tokens (its
usage figures: characters of the request messages and of the answer, / 4). Statements: graphmem's
``store.round_trips``; mem0's ``Neo4jGraph.query`` calls. graphmem's rolling summary runs in the
background as by default; its requests are counted apart (``summary requests``), not per add.

    python -m benchmarks.peers.add_modes --neo4j-url bolt://127.0.0.1:7689 --latency 0 0.4 --runs 3
    python -m benchmarks.peers.add_modes --neo4j-url bolt://127.0.0.1:7689 --growth 10 100 1000
    python -m benchmarks.peers.add_modes --cold --populate 300 --launcher-port 7689 7476 --runs 3

Each engine run ends with searches: its first (after its adds: on a database whose statistics its
adds moved) and 5 more rounds over its users (warm; mem0's ``Memory.search`` asks the model for the
query's entities, graphmem's asks nothing). graphmem's background plan warming (once per process and
server) is waited for before an engine's adds.

``--growth``: the prompt tokens of one add (each mode) for a user who already has N relations around
them (loaded through the store), and the relations the single request lists. ``--cold``: restarts the
launcher's Neo4j (ports given; it must be the caller's own) and times setup, the first adds and
searches and warm ones, with the plan warming of Neo4jStore.setup off and on (``--warm-only``: on only);
``--populate N`` first writes N other users' graphs, so the server restarts over a database in use, and
removes them at the end. The first adds and searches are timed once the warming is over
(``wait_warm``), or at once with ``--no-wait``.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.cost.add_script import SCRIPT
from benchmarks.peers.mem0_compare import DIMS, VENV, SharedModel, WorkerProcess, scripted_models
from graphmem import Memory
from graphmem.embeddings import HashingEmbedder
from graphmem.testing import ScriptedLLMServer
from graphmem.testing import scripted_server as scripted
from graphmem.types import Scope

WORKER = Path(__file__).resolve().parent / "mem0_memory_worker.py"
ENGINES = ("staged", "single_pass", "mem0 1.0.11")


class CountingServer(ScriptedLLMServer):
    """The scripted server, adding up its own usage figures, and answering a request that offers no
    tools (mem0's JSON mode) with the handler's reply as the message text."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        #: the rolling summary's requests and tokens, counted apart; ``add_tokens`` leaves them out of
        #: the server's own usage counters (prompt_tokens, completion_tokens: every request)
        self.summary_requests = 0
        self.summary_tokens = [0, 0]
        self._summary_lock = threading.Lock()

    def _completion(self, body: dict, tool_calls: list | None, content: str | None = None) -> dict:
        out = super()._completion(body, tool_calls, content)
        if any(name == "summarize" for name, _ in tool_calls or []):
            with self._summary_lock:
                self.summary_requests += 1
                self.summary_tokens[0] += out["usage"]["prompt_tokens"]
                self.summary_tokens[1] += out["usage"]["completion_tokens"]
        return out

    def add_tokens(self) -> tuple[int, int]:
        """Prompt and completion tokens of every request answered so far but the summary's."""
        with self._summary_lock:
            return self.prompt_tokens - self.summary_tokens[0], self.completion_tokens - self.summary_tokens[1]

    def _respond(self, path: str, body: dict) -> tuple[int, dict[str, str], bytes]:
        if body.get("tools"):
            return super()._respond(path, body)
        self._record_and_take_fault(path, body)
        if self.latency and self._stopping.wait(self.latency):
            raise scripted._Stopped()
        handler = self._handler
        reply = handler(None, body) if handler is not None else None
        text = reply if isinstance(reply, str) else json.dumps(reply or {})
        return 200, {}, scripted._json_bytes(self._completion(body, None, text))


class Model(SharedModel):
    """mem0_compare's shared extraction, plus mem0's JSON-mode requests and graphmem's single-pass
    memory listing (no "New facts" section after it)."""

    def __call__(self, tool: str | None, body: dict) -> Any:
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        if tool is None and not body.get("tools"):
            if "smart memory manager" in prompt:
                ids = re.findall(r"'id': '(\d+)'", prompt)
                return {"memory": [{"id": i, "text": "", "event": "NONE"} for i in ids]
                        + [{"id": str(len(ids) + n), "text": f, "event": "ADD"} for n, f in enumerate(self.step.facts)]}
            return {"facts": self.step.facts}
        if tool == "update_memory":
            match = re.search(r"Existing memories:\n(\[\]|\[.*?\n\])", prompt, re.S)
            existing = json.loads(match.group(1)) if match else []
            return {"memory": [{"id": m["id"], "text": m["text"], "event": "NONE"} for m in existing]
                    + [{"id": str(len(existing) + i), "text": f, "event": "ADD"} for i, f in enumerate(self.step.facts)]}
        return super().__call__(tool, body)


class Mem0(WorkerProcess):
    """mem0's full Memory (Qdrant facts + Neo4j graph) in the mem0 virtualenv."""

    def __init__(self, url: str, server: ScriptedLLMServer, workdir: Path) -> None:
        config = {**scripted_models(server),
                  "vector_store": {"provider": "qdrant", "config": {"collection_name": "bench", "embedding_model_dims": DIMS,
                                                                    "path": str(workdir / "qdrant"), "on_disk": True}},
                  "graph_store": {"provider": "neo4j", "config": {"url": url, "username": "neo4j", "password": "auth-disabled",
                                                                  "base_label": True}},
                  "history_db_path": str(workdir / "mem0-history.db")}
        super().__init__(WORKER, config)


def graphmem(url: str, server: ScriptedLLMServer, workdir: Path, mode: str, warm: bool = True) -> Memory:
    from graphmem.embeddings.openai import OpenAIEmbedder
    from graphmem.stores.neo4j import Neo4jStore

    embedder = OpenAIEmbedder(model="text-embedding-3-small", api_key="scripted", base_url=server.base_url, dims=DIMS)
    store = Neo4jStore(url=url, embedding_dims=DIMS, warm_plans=warm)
    config = {"llm": {"provider": "openai_compatible", "config": {"base_url": server.base_url, "api_key": "scripted", "model": "scripted"}},
              "history_db_path": str(workdir / f"history-{mode}.db"), "add_mode": mode}
    return Memory(config, store=store, embedder=embedder)


def run_engine(engine: str, url: str, server: CountingServer, model: Model, args: argparse.Namespace, workdir: Path) -> dict:
    memory = graphmem(url, server, workdir, engine) if engine != "mem0 1.0.11" else None
    worker = Mem0(url, server, workdir) if memory is None else None
    if memory is not None:  # the process's plan warming (once per server) is not timed with the adds
        memory.store.wait_warm()
    tag = f"{int(time.time() * 1000) % 10**8}{engine[:3]}"
    users = [f"u{tag}{i}" for i in range(args.users)]
    rows: list[dict[str, Any]] = []

    def add(user: str, step: Any, record: bool) -> None:
        model.step, model.user, model.entities = step, user, step.entities
        before = (len(server.requests), server.summary_requests, server.embedding_calls, *server.add_tokens())
        trips = memory.store.round_trips if memory is not None else 0
        started = time.perf_counter()
        out = worker.call(op="add", text=step.text, user_id=user) if worker else memory.add(step.text, user_id=user, timestamp=step.at)
        wall = (time.perf_counter() - started) * 1000
        if record:
            rows.append({"chat": len(server.requests) - before[0] - (server.summary_requests - before[1]),
                         "embeddings": server.embedding_calls - before[2], "prompt_tokens": server.add_tokens()[0] - before[3],
                         "completion_tokens": server.add_tokens()[1] - before[4],
                         "statements": out["statements"] if worker else memory.store.round_trips - trips,
                         "wall_ms": out["wall_ms"] if worker else round(wall, 2)})

    def search(user: str) -> float:
        started = time.perf_counter()
        out = worker.call(op="search", text=f"Where does {user} live?", user_id=user) if worker else \
            memory.search(f"Where does {user} live?", user_id=user)
        return out["wall_ms"] if worker else (time.perf_counter() - started) * 1000

    warmup = f"{users[0]}w"
    searches: list[float] = []
    try:
        for step in SCRIPT[:2]:
            add(warmup, step, record=False)
        for step in SCRIPT[: args.steps]:
            for user in users:
                add(user, step, record=True)
        # the engine's first search (after its adds: on a young database, after its statistics moved),
        # then 5 rounds over the users (warm)
        searches = [search(user) for _ in range(6) for user in users]
    finally:
        for user in [warmup, *users]:
            if worker:
                worker.call(op="delete_all", user_id=user)
            elif memory is not None:
                memory.flush()
                memory.delete_all(user_id=user)
        if worker:
            worker.close()
        if memory is not None:
            memory.close()
    return summarise(rows, searches)


def summarise(rows: list[dict[str, Any]], searches: list[float] | None = None) -> dict[str, Any]:
    pct = common.percentiles([r["wall_ms"] for r in rows], (50, 90))
    keys = ("chat", "embeddings", "statements", "prompt_tokens", "completion_tokens")
    out = {"n": len(rows), **{k: round(sum(r[k] for r in rows) / len(rows), 2) for k in keys},
           "wall_p50_ms": pct["p50"], "wall_p90_ms": pct["p90"]}
    if searches:
        out.update(search_first_ms=round(searches[0], 1), search_warm_p50_ms=round(statistics.median(searches[1:]), 1))
    return out


def compare(args: argparse.Namespace, url: str) -> list[dict[str, Any]]:
    hashing = HashingEmbedder(dims=DIMS)
    out = []
    for latency in args.latency:
        runs: dict[str, list[dict[str, Any]]] = {e: [] for e in args.engines}
        for run in range(args.runs):
            for engine in args.engines:
                model = Model()
                with tempfile.TemporaryDirectory(prefix="graphmem-addmodes-") as tmp, \
                        CountingServer(latency=latency, embedder=lambda texts, dims: hashing.embed(texts)) as server:
                    server.set_handler(model)
                    runs[engine].append(run_engine(engine, url, server, model, args, Path(tmp)))
                print(f"  latency {latency}: run {run + 1}/{args.runs} {engine}: {runs[engine][-1]}", file=sys.stderr)
        medians = {e: {k: statistics.median(r[k] for r in rs) for k in rs[0]} for e, rs in runs.items()}
        out.append({"latency_s": latency, "runs": runs, "medians": medians})
        print_compare(latency, medians)
    return out


def print_compare(latency: float, medians: dict[str, dict[str, Any]]) -> None:
    mem0 = medians.get("mem0 1.0.11")
    print(f"\nmodel latency {latency * 1000:.0f} ms per request; per add, medians over runs")
    rows = [[e, m["n"], m["chat"], m["embeddings"], m["statements"], m["prompt_tokens"], m["completion_tokens"],
             m["wall_p50_ms"], m["wall_p90_ms"],
             round(m["wall_p50_ms"] / mem0["wall_p50_ms"], 2) if mem0 else None,
             round(m["wall_p90_ms"] / mem0["wall_p90_ms"], 2) if mem0 else None,
             m.get("search_first_ms"), m.get("search_warm_p50_ms"),
             round(m["search_warm_p50_ms"] / mem0["search_warm_p50_ms"], 2) if mem0 and "search_warm_p50_ms" in m else None]
            for e, m in medians.items()]
    print(common.table(["engine", "adds", "chat requests", "embedding requests", "statements", "prompt tokens",
                        "completion tokens", "wall p50 ms", "wall p90 ms", "p50 / mem0", "p90 / mem0",
                        "first search ms", "warm search p50 ms", "warm search / mem0"], rows))


def growth(args: argparse.Namespace, url: str) -> list[dict[str, Any]]:
    """Prompt tokens of one add for a user with N relations around them, each mode."""
    from graphmem.types import EntityWrite, GraphWrite, RelationWrite, Scope, canonical_name, new_id, utcnow

    hashing = HashingEmbedder(dims=DIMS)
    out = []
    for n in args.growth:
        row: dict[str, Any] = {"relations_around_user": n}
        for mode in ("staged", "single_pass"):
            model = Model()
            with tempfile.TemporaryDirectory(prefix="graphmem-growth-") as tmp, \
                    CountingServer(embedder=lambda texts, dims: hashing.embed(texts)) as server:
                server.set_handler(model)
                memory = graphmem(url, server, Path(tmp), mode)
                user = f"g{n}{mode[:2]}{int(time.time()) % 10**6}"
                scope = Scope.of(user_id=user)
                me = EntityWrite(new_id(), user, canonical_name(user), "person", hashing.embed([user])[0], True)
                things = [EntityWrite(new_id(), f"thing {i}", f"thing {i}", "object", v, True)
                          for i, v in enumerate(hashing.embed([f"thing {i}" for i in range(n)]))]
                write = GraphWrite(add_id=new_id(), scope=scope, at=utcnow(), entities=[me, *things],
                                   relations=[RelationWrite(me.id, "OWNS", t.id, valid_at=utcnow()) for t in things])
                memory.store.write_many([write])
                step = SCRIPT[0]
                model.step, model.user, model.entities = step, user, step.entities
                before = server.prompt_tokens
                memory.add(step.text, user_id=user, timestamp=step.at)
                row[f"{mode}_prompt_tokens"] = server.prompt_tokens - before
                if mode == "single_pass":
                    last = [r for r in server.requests if "update_memory" in r.tools][-1].messages[-1]["content"]
                    row["single_pass_relations_listed"] = last.split("Existing memories:")[0].count(" -- OWNS -- ")
                memory.flush()
                memory.delete_all(user_id=user)
                memory.close()
        out.append(row)
    print("\nprompt tokens of one add by the relations around the user (single_pass lists at most 100)")
    print(common.table(list(out[0]), [list(r.values()) for r in out]))
    return out


def cold(args: argparse.Namespace) -> list[dict[str, Any]]:
    """Setup, first adds / searches after a server start, and warm ones; plan warming off, then on."""
    import os

    from graphmem.launcher import Neo4jLauncher

    os.environ.setdefault("JAVA_HOME", "/usr/lib/jvm/java-17-openjdk-amd64")
    launcher = Neo4jLauncher(bolt_port=args.launcher_port[0], http_port=args.launcher_port[1])
    hashing = HashingEmbedder(dims=DIMS)
    out = []
    populated: list[str] = []
    if args.populate:
        launcher.stop()
        populated = populate(launcher.start(timeout=600), args.populate, hashing)
    for run in range(args.runs):
        for warm in (True,) if args.warm_only else (False, True):
            launcher.stop()
            url = launcher.start(timeout=600)
            model = Model()
            with tempfile.TemporaryDirectory(prefix="graphmem-cold-") as tmp, \
                    CountingServer(embedder=lambda texts, dims: hashing.embed(texts)) as server:
                server.set_handler(model)
                row = cold_run(url, server, model, Path(tmp), warm, wait=not args.no_wait)
            row.update(run=run + 1, warm_plans=warm)
            out.append(row)
            print(f"  {row}", file=sys.stderr)
    if populated:
        from graphmem.stores.neo4j import Neo4jStore

        with closing(Neo4jStore(url=launcher.uri, embedding_dims=DIMS, warm_plans=False)) as store:
            for user in populated:
                store.delete_all(Scope.of(user_id=user))
    held = f"{args.populate} other users' graphs" if args.populate else "no other data"
    print(f"\ncold start: ms after a Neo4j restart (first) against the median of 5 later ones (warm); the database held {held}")
    print(common.table(list(out[0]), [list(r.values()) for r in out]))
    return out


def populate(url: str, users: int, hashing: HashingEmbedder) -> list[str]:
    """Other users' graphs, so a restart happens over a database in use (10 entities, 10 relations,
    10 memories and 10 logged messages each), not an empty one whose statistics change with the
    first adds (Neo4j re-plans a statement whose statistics moved by more than 75%)."""
    from graphmem.stores.neo4j import Neo4jStore
    from graphmem.types import EntityWrite, GraphWrite, LoggedMessage, MemoryWrite, RelationWrite, canonical_name, new_id, utcnow

    names = [f"u{int(time.time()) % 10**6}p{i}" for i in range(users)]
    with closing(Neo4jStore(url=url, embedding_dims=DIMS, warm_plans=False)) as store:
        store.setup()
        for user in names:
            vectors = hashing.embed([user] + [f"{user} thing {i}" for i in range(10)])
            me = EntityWrite(new_id(), user, canonical_name(user), "person", vectors[0], True)
            things = [EntityWrite(new_id(), f"thing {i}", f"thing {i}", "object", v, True) for i, v in enumerate(vectors[1:])]
            write = GraphWrite(add_id=new_id(), scope=Scope.of(user_id=user), at=utcnow(), entities=[me, *things],
                               relations=[RelationWrite(me.id, "OWNS", t.id, valid_at=utcnow()) for t in things])
            write.memories = [MemoryWrite("ADD", new_id(), f"Owns thing {i}", v, {}, "user", [t.id])
                              for i, (t, v) in enumerate(zip(things, vectors[1:], strict=True))]
            write.messages = [LoggedMessage("user", f"I own thing {i}", utcnow()) for i in range(10)]
            store.write_many([write])
    print(f"  populated {users} users", file=sys.stderr)
    return names


def cold_run(url: str, server: CountingServer, model: Model, workdir: Path, warm: bool, wait: bool = True) -> dict[str, Any]:
    from graphmem.stores.neo4j import warm as warming

    warming.WARMED.clear()  # the server was restarted: its plan cache is empty
    started = time.perf_counter()
    memories = {mode: graphmem(url, server, workdir, mode, warm=warm) for mode in ("staged", "single_pass")}
    row: dict[str, Any] = {"setup_ms": round((time.perf_counter() - started) * 1000)}
    for memory in memories.values():  # the plan warming runs in the background; the adds start once it is over
        if wait:
            memory.store.wait_warm()
    row["warmed_ms"] = round((time.perf_counter() - started) * 1000)
    tag = f"c{int(time.time() * 1000) % 10**8}"
    times: dict[str, list[float]] = {}
    for i in range(6):
        for mode, memory in memories.items():
            user = f"{tag}{mode[:2]}{i}"
            for kind, step in (("add", SCRIPT[0]), ("add2", SCRIPT[7])):
                model.step, model.user, model.entities = step, user, step.entities
                t = time.perf_counter()
                memory.add(step.text, user_id=user, timestamp=step.at)
                times.setdefault(f"{mode} {kind}", []).append((time.perf_counter() - t) * 1000)
            t, served = time.perf_counter(), memory.store.server_ms
            memory.search(f"Where does {user} live?", user_id=user)
            times.setdefault(f"{mode} search", []).append((time.perf_counter() - t) * 1000)
            times.setdefault(f"{mode} search server", []).append(memory.store.server_ms - served)
    for key, values in times.items():
        row[f"{key} first"] = round(values[0])
        row[f"{key} warm"] = round(statistics.median(values[1:]))
    for i in range(6):
        for mode, memory in memories.items():
            memory.flush()
            memory.delete_all(user_id=f"{tag}{mode[:2]}{i}")
    for memory in memories.values():
        memory.close()
    return row


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.peers.add_modes", description=__doc__.split("\n\n")[0])
    p.add_argument("--neo4j-url", default="bolt://127.0.0.1:7689")
    p.add_argument("--latency", type=float, nargs="*", default=[], help="model seconds per request, one comparison each")
    p.add_argument("--engines", nargs="+", default=list(ENGINES), choices=ENGINES)
    p.add_argument("--users", type=int, default=3)
    p.add_argument("--steps", type=int, default=12, help="scripted messages per user (adds = users x steps)")
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--growth", type=int, nargs="*", default=[], help="relations around the user, one prompt measure each")
    p.add_argument("--cold", action="store_true", help="restart the launcher's Neo4j on --launcher-port and time cold starts")
    p.add_argument("--populate", type=int, default=0, metavar="USERS",
                   help="--cold: restart over a database holding this many other users' graphs")
    p.add_argument("--no-wait", action="store_true", help="--cold: the first add starts while the warming runs")
    p.add_argument("--warm-only", action="store_true", help="--cold: only the runs with plan warming on")
    p.add_argument("--launcher-port", type=int, nargs=2, default=[7689, 7476], metavar=("BOLT", "HTTP"))
    p.add_argument("--out", default=None)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    result: dict[str, Any] = {"parameters": {k: v for k, v in vars(args).items() if k != "out"}, "commit": common.git_commit()}
    if args.latency and "mem0 1.0.11" in args.engines and not (VENV / "bin" / "python").exists():
        print(f"{VENV} is missing: python -m benchmarks.peers.mem0_compare --setup", file=sys.stderr)
        return 2
    if args.cold:
        result["cold"] = cold(args)
    if args.latency:
        result["compare"] = compare(args, args.neo4j_url)
    if args.growth:
        result["growth"] = growth(args, args.neo4j_url)
    result["machine"] = common.machine_info(common.neo4j_server_version(args.neo4j_url))
    path = common.write_result("add_modes", result, args.out)
    print(f"\nwritten {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
