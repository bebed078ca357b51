"""Fault soak of ``graphmem serve`` (issue 33): keyed adds under faults, then an audit of what is stored.

Per store, ``--rounds`` rounds of ``--adds`` verbatim adds (``Idempotency-Key`` on each) from
``--clients`` threads, each round hit by a fault:
- ``kill``: the server is killed (SIGKILL) after a random share of the round was acknowledged,
  then started again;
- ``stop``: the same with a graceful stop (SIGTERM: the server shuts down and closes its store);
- ``neo4j-stop`` / ``neo4j-kill`` (with ``--restart-neo4j BOLT:HTTP``, your own launcher instance):
  the launcher's Neo4j stopped gracefully (SIGTERM, a clean shutdown: a rolling restart) or killed
  (SIGKILL) mid-burst, then started again on the same data;
- ``cut`` (Neo4j only): the server's Bolt link is cut at a random moment and restored 1 s later;
  every other round the cut falls right after a COMMIT was sent (its answer lost: the
  outcome-unknown path, answered 503 WriteOutcomeUnknown).
Clients retry every request that did not answer 200 with the same key (bounded), as a careful
client would. Then the audit, through the API: attempts, acknowledged (200 at the first try),
outcome_unknown (503 WriteOutcomeUnknown answers), stored, lost (acknowledged but not stored),
duplicated (one request stored twice), missing_history (a stored memory without its ADD row),
replay_mismatch (a retry of an acknowledged add answering other ids). All but the first four must
be 0. Loopback only; every loop is bounded.

    python -m benchmarks.faults.fault_soak --stores embedded neo4j --neo4j-url bolt://127.0.0.1:7704
    python -m benchmarks.faults.fault_soak --stores neo4j --neo4j-url bolt://127.0.0.1:7701 --restart-neo4j 7701:7401
    python -m benchmarks.faults.fault_soak --source /path/to/other/checkout ...   # the server runs that code (a before run)
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx

from benchmarks import common
from benchmarks.faults import checkout_env
from graphmem.testing import ScriptedLLMServer
from graphmem.testing.links import CommitCut, free_port

DIMS = 384  # the tests' dimension, so the soak shares their Neo4j


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--stores", nargs="+", default=["embedded"], choices=["embedded", "neo4j"])
    p.add_argument("--neo4j-url", default=os.environ.get("GRAPHMEM_NEO4J_URI", "bolt://127.0.0.1:7687"))
    p.add_argument("--rounds", type=int, default=4)
    p.add_argument("--adds", type=int, default=60, help="adds per round")
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--restart-neo4j", "--kill-neo4j", dest="restart_neo4j", metavar="BOLT:HTTP",
                   help="also stop (gracefully, then with kill -9) the launcher's Neo4j on these ports mid-burst and start it "
                        "again (your own instance only)")
    p.add_argument("--launcher-root", type=Path, default=Path(__file__).resolve().parents[2],
                   help="the checkout whose launcher runs that Neo4j (default: this one)")
    p.add_argument("--scenarios", nargs="+", help="only these of kill, stop, cut, neo4j-stop, neo4j-kill")
    p.add_argument("--source", help="run the server from this checkout of graphmem (e.g. an older commit: a before run)")
    p.add_argument("--timing", type=int, default=0, metavar="N",
                   help="also time N Neo4j lookups each of another tenant's id and of an unknown id (ownership checked in the lookup)")
    return p.parse_args(argv)


def write_config(folder: Path, llm_url: str, store: str, bolt: str | None) -> Path:
    import json

    graph = {"provider": "neo4j", "config": {"url": bolt}} if store == "neo4j" else \
        {"provider": "embedded", "config": {"path": str(folder / "graph")}}
    config = {"llm": {"provider": "openai_compatible", "config": {"base_url": llm_url, "api_key": "k", "model": "m"}},
              "embedder": {"provider": "hashing", "config": {"dims": DIMS}}, "graph_store": graph,
              "history_db_path": str(folder / "history.db"), "context": {"summary_every": 0}}
    path = folder / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


class Server:
    """``graphmem serve`` as a process that can be killed and started again on the same port."""

    def __init__(self, config: Path, log: Path, source: str | None = None) -> None:
        self.port = free_port()
        self.args = [sys.executable, "-m", "graphmem.cli.main", "serve", "--config", str(config), "--no-auth", "--port", str(self.port)]
        self.log = log
        self.proc: subprocess.Popen[bytes] | None = None
        self.source = str(Path(source).resolve()) if source else None  # the server runs from there (cwd)
        self.env = checkout_env(self.source) if self.source else dict(os.environ)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 120.0) -> None:
        with open(self.log, "ab") as out:
            self.proc = subprocess.Popen(self.args, stdout=out, stderr=subprocess.STDOUT, env=self.env, cwd=self.source)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code in (200, 503):
                    return
            except httpx.HTTPError:
                time.sleep(0.2)
        raise RuntimeError(f"graphmem serve did not start: {self.log.read_text(errors='replace')[-1500:]}")

    def terminate(self) -> None:
        """SIGTERM: a graceful stop (the server finishes, closes its store and exits)."""
        self.stop()

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()


class Round:
    """One round's requests: the first answer of each, and its final answer after retries."""

    def __init__(self, user: str, adds: int) -> None:
        self.user, self.adds = user, adds
        self.first: dict[int, list[str]] = {}  # acknowledged at the first try: the ids
        self.final: dict[int, list[str]] = {}
        self.unknown = 0
        self.lock = threading.Lock()

    def body(self, i: int) -> dict[str, Any]:
        return {"messages": [{"role": "user", "content": f"soak {self.user} #{i}"}], "user_id": self.user, "infer": False}

    def send(self, url: str, i: int) -> tuple[int, Any]:
        try:
            r = httpx.post(f"{url}/memories", json=self.body(i), headers={"Idempotency-Key": f"{self.user}:{i}"}, timeout=30)
        except httpx.HTTPError:
            return 0, None
        payload = r.json() if r.headers.get("content-type", "").startswith("application/json") else None
        if r.status_code == 503 and isinstance(payload, dict) and payload.get("error") == "WriteOutcomeUnknown":
            with self.lock:
                self.unknown += 1
        return r.status_code, payload


def run_round(server: Server, rnd: Round, clients: int, fault: Any) -> None:
    """The burst with ``fault`` fired from a watcher thread, then retries until every request has a 200."""
    done = threading.Event()
    watcher = threading.Thread(target=fault, args=(rnd, done), daemon=True)
    watcher.start()

    def first(i: int) -> None:
        code, payload = rnd.send(server.url, i)
        if code == 200:
            with rnd.lock:
                rnd.first[i] = [m["id"] for m in payload["results"]]

    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(first, range(rnd.adds)))
    done.set()
    watcher.join(900)  # a Neo4j start takes minutes on a loaded machine
    for _ in range(40):  # bounded: about 40 s of retries at most
        for i in range(rnd.adds):
            if i in rnd.final:
                continue
            code, payload = rnd.send(server.url, i)
            if code == 200:
                rnd.final[i] = [m["id"] for m in payload["results"]]
        if len(rnd.final) == rnd.adds:
            return
        time.sleep(1.0)


def audit(url: str, rnd: Round) -> dict[str, int]:
    stored = httpx.get(f"{url}/memories", params={"user_id": rnd.user, "limit": 10_000}, timeout=60).json()["results"]
    by_text = Counter(m["memory"] for m in stored)
    stored_ids = {m["id"] for m in stored}
    wanted = {i: rnd.body(i)["messages"][0]["content"] for i in range(rnd.adds)}
    missing_history = sum(_events(url, m["id"]) != ["ADD"] for m in stored)
    return {
        "attempts": rnd.adds,
        "acknowledged": len(rnd.first),
        "outcome_unknown": rnd.unknown,
        "stored": len(stored),
        "lost": sum(1 for i, ids in rnd.first.items() if not set(ids) <= stored_ids),
        "duplicated": sum(n - 1 for n in by_text.values() if n > 1),
        "missing": sum(1 for text in wanted.values() if by_text[text] == 0),
        "missing_history": missing_history,
        "replay_mismatch": sum(1 for i, ids in rnd.first.items() if rnd.final.get(i) != ids),
    }


def _events(url: str, memory_id: str) -> list[str] | None:
    """A memory's history events; None when the server has none for it (404: a stored memory
    without its history, what the audit counts as missing)."""
    answer = httpx.get(f"{url}/memories/{memory_id}/history", timeout=30)
    rows = answer.json() if answer.status_code == 200 else None
    return [h["event"] for h in rows] if isinstance(rows, list) else None


def kill_fault(server: Server, rng: random.Random, graceful: bool = False):
    def fault(rnd: Round, done: threading.Event) -> None:
        share = rng.uniform(0.2, 0.8)
        while not done.is_set() and len(rnd.first) < share * rnd.adds:
            time.sleep(0.005)
        server.terminate() if graceful else server.kill()
        server.start()

    return fault


def neo4j_restart_fault(ports: str, root: Path, rng: random.Random, graceful: bool):
    """The launcher's Neo4j mid-burst: stopped cleanly (its ``stop``: SIGTERM, then the JVM's
    shutdown) or SIGKILLed (its pid file, checked to be our jar), then started again on the same
    ports and data."""
    import signal

    from graphmem.launcher import Neo4jLauncher

    bolt, http = (int(p) for p in ports.split(":"))
    launcher = Neo4jLauncher(root=root, bolt_port=bolt, http_port=http)

    def fault(rnd: Round, done: threading.Event) -> None:
        share = rng.uniform(0.2, 0.6)
        while not done.is_set() and len(rnd.first) < share * rnd.adds:
            time.sleep(0.005)
        if graceful:
            launcher.stop()
        elif (pid := launcher._live_pid()) is not None:
            os.kill(pid, signal.SIGKILL)
            time.sleep(1.0)
        launcher.start(timeout=900, warm=False)

    return fault


def fault_of(scenario: str, server: Server, link: CommitCut | None, args: argparse.Namespace, rng: random.Random, n: int):
    if scenario in ("kill", "stop"):
        return kill_fault(server, rng, graceful=scenario == "stop")
    if scenario == "cut":
        assert link is not None
        return cut_fault(link, rng, n)
    return neo4j_restart_fault(args.restart_neo4j, args.launcher_root, rng, graceful=scenario == "neo4j-stop")


def cut_fault(link: CommitCut, rng: random.Random, round_no: int):
    def fault(rnd: Round, done: threading.Event) -> None:
        if round_no % 2:  # right after a COMMIT: its answer lost
            link.arm()
            link.fired.wait(30)
        else:
            time.sleep(rng.uniform(0.05, 0.5))
            link.cut()
        time.sleep(1.0)
        link.restore()

    return fault


def soak(store: str, args: argparse.Namespace, rng: random.Random) -> list[dict[str, Any]]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp, ScriptedLLMServer() as llm:
        folder = Path(tmp)
        link = None
        if store == "neo4j":
            host, port = args.neo4j_url.rsplit("//", 1)[1].split(":")
            link = CommitCut(host, int(port))
        scenarios = ["kill", "stop"] + (["cut"] if link is not None else []) + \
            (["neo4j-stop", "neo4j-kill"] if link and args.restart_neo4j else [])
        for scenario in [s for s in scenarios if not args.scenarios or s in args.scenarios]:
            bolt = f"bolt://127.0.0.1:{link.port}" if link is not None else None
            server = Server(write_config(folder, llm.base_url, store, bolt), folder / f"{scenario}.log", args.source)
            server.start()
            try:
                for n in range(args.rounds):
                    rnd = Round(f"soak-{uuid.uuid4().hex[:8]}", args.adds)
                    run_round(server, rnd, args.clients, fault_of(scenario, server, link, args, rng, n))
                    rows.append({"store": store, "fault": scenario, "round": n, **audit(server.url, rnd)})
                    print(rows[-1], flush=True)
            finally:
                server.stop()
        if link is not None:
            link.cut()
    return rows


def mann_whitney_z(a: list[float], b: list[float]) -> float:
    """The normal approximation of the Mann-Whitney U test (ties ranked by their mean rank)."""
    merged = sorted([(v, 0) for v in a] + [(v, 1) for v in b])
    ranks = [0.0] * len(merged)
    i = 0
    while i < len(merged):
        j = i
        while j + 1 < len(merged) and merged[j + 1][0] == merged[i][0]:
            j += 1
        for k in range(i, j + 1):
            ranks[k] = (i + j) / 2 + 1
        i = j + 1
    n1, n2 = len(a), len(b)
    u = sum(r for r, (_, side) in zip(ranks, merged, strict=True) if side == 0) - n1 * (n1 + 1) / 2
    return float((u - n1 * n2 / 2) / ((n1 * n2 * (n1 + n2 + 1) / 12) ** 0.5))


def ownership_timing(url: str, n: int) -> None:
    """Another tenant's memory id against an unknown id, looked up the way REST's routes do
    (Owners in the statement), interleaved; and the old way (load, then compare) beside it."""
    import statistics

    from graphmem.stores.neo4j import Neo4jStore
    from graphmem.types import GraphWrite as Write
    from graphmem.types import MemoryWrite, Owners, Scope, new_id, utcnow

    store = Neo4jStore(url=url, embedding_dims=DIMS)
    store.setup()
    theirs = Scope.of(f"timing-{uuid.uuid4().hex[:6]}")
    write = Write(add_id=new_id(), scope=theirs, at=utcnow())
    write.memories = [MemoryWrite("ADD", new_id(), "their secret " * 40, [0.1] * DIMS, {"k": "v" * 200})]
    store.write(write)
    foreign, mine = write.memories[0].id, Owners(users=("someone-else",))
    times: dict[str, list[float]] = {"foreign": [], "unknown": [], "foreign, loaded then compared (before)": []}
    for _ in range(n):
        for name, memory_id, owners in (("foreign", foreign, mine), ("unknown", new_id(), mine),
                                        ("foreign, loaded then compared (before)", foreign, None)):
            started = time.perf_counter()
            store.get_memory(memory_id, owners)
            times[name].append((time.perf_counter() - started) * 1000)
    for name, values in times.items():
        print(f"{name}: median {statistics.median(values):.3f} ms")
    print(f"Mann-Whitney z, foreign vs unknown: {mann_whitney_z(times['foreign'], times['unknown']):.2f}; "
          f"loaded foreign vs unknown: {mann_whitney_z(times['foreign, loaded then compared (before)'], times['unknown']):.2f}")
    store.delete_all(theirs)
    store.close()


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.timing:
        ownership_timing(args.neo4j_url, args.timing)
    rng = random.Random(args.seed)
    rows = [row for store in args.stores for row in soak(store, args, rng)]
    keys = ["attempts", "acknowledged", "outcome_unknown", "stored", "lost", "duplicated", "missing", "missing_history",
            "replay_mismatch"]
    totals = []
    for (store, fault) in dict.fromkeys((r["store"], r["fault"]) for r in rows):
        mine = [r for r in rows if r["store"] == store and r["fault"] == fault]
        totals.append([store, fault, len(mine)] + [sum(r[k] for r in mine) for k in keys])
    print(common.table(["store", "fault", "rounds", *keys], totals))
    common.write_result("fault_soak", {"args": vars(args), "rounds": rows, "machine": common.machine_info()})


if __name__ == "__main__":
    main()
