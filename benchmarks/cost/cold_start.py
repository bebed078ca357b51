"""Short-lived processes on Neo4j: what one CLI command, one ``Memory.from_config`` and the first add
after a server start cost, before and after, measured in the same run.

Every figure is the wall time of a fresh process (or of a step inside one), p50 of ``--runs``, on a
server that is already warm (its plans cached), with the hashing embedder:

- ``graphmem search`` / ``graphmem add --no-infer`` / ``graphmem add`` (the default add, against a
  scripted model at latency 0): the whole process, interpreter start to exit;
- ``import graphmem + Memory.from_config`` and ``Memory.from_config`` alone (inside the process);
- the floors: importing the Neo4j driver, and the openai SDK with its client, each alone in a fresh
  process (FLOORS): the part of the figures above that is the dependencies' own;
- with ``--restarts N`` (the launcher's Neo4j on ``--launcher-port``, which must be the caller's own):
  the first add of a new process right after a server start, against the first add of a new process on
  the warm server and against a warm add (the median of adds 2-6 of a process); this checkout's
  processes set ``"warm_up": false`` (short-lived), the baseline's cannot; the launcher's start warms
  graphmem's statements for this checkout (graphmem/stores/neo4j/prewarm.py) and not for the
  baseline (``--no-warm``, as it was), and its wall time is reported; for this checkout, after one
  more restart, the first add of a long-lived process (the default ``"warm_up"``, its first add 3 s
  after it started): what a server start costs a process whose clients are ready.

``--baseline REV`` runs the same commands on the source of another commit (``git archive`` into a
temporary folder, put first on PYTHONPATH; same interpreter and packages), alternating with this
checkout run by run. The children run with bytecode caching on, as an installed package has it.

    python -m benchmarks.cost.cold_start --neo4j-url bolt://127.0.0.1:7707 --baseline main --runs 5
    python -m benchmarks.cost.cold_start --neo4j-url bolt://127.0.0.1:7707 --baseline main --restarts 2 --launcher-port 7707 7407
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.cost.add_script import SCRIPT
from benchmarks.peers.mem0_compare import SharedModel
from graphmem.testing import ScriptedLLMServer

CHILD = Path(__file__).resolve().parent / "cold_start_child.py"
#: floors: a dependency's own cost in a fresh process (seconds printed by the child), which no change to
#: graphmem removes: from_config on Neo4j imports the driver (which imports numpy when it is installed,
#: and it is: a core dependency), and an add's first model request imports the openai SDK and builds its
#: client (the SDK's HTTP transport is imported and its TLS context made in the constructor; pydantic,
#: which graphmem imports anyway, is imported before the clock starts)
FLOORS = {
    "floor: import neo4j (numpy included)":
        "import time; t = time.perf_counter(); import neo4j; print(time.perf_counter() - t)",
    "floor: import openai + OpenAI()":
        "import pydantic, time; t = time.perf_counter(); import openai; openai.OpenAI(api_key='k', base_url='http://127.0.0.1:9/v1'); "
        "print(time.perf_counter() - t)",
}
MESSAGE = SCRIPT[0].text


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--neo4j-url", required=True)
    p.add_argument("--baseline", help="a git revision to measure beside this checkout (e.g. main)")
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--dims", type=int, default=384, help="hashing embedder size (the database's vector indexes must match)")
    p.add_argument("--restarts", type=int, default=0, help="server restarts per variant for the first-add rows")
    p.add_argument("--launcher-port", type=int, nargs=2, metavar=("BOLT", "HTTP"))
    return p.parse_args(argv)


def baseline_tree(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "archive", rev], cwd=common.REPO_ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def child_env(source: Path | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    if source is not None:
        env["PYTHONPATH"] = str(source)
    return env


#: CPU seconds (user + system) of the last child: on a loaded machine wall time is mostly waiting for a core
LAST_CPU = [0.0]


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    LAST_CPU[0] = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:4])} ... failed: {out.stderr[-800:]}")
    return seconds, out.stdout


def child(job: dict[str, Any], env: dict[str, str]) -> dict[str, Any]:
    _, out = timed([sys.executable, str(CHILD), json.dumps(job)], env)
    return json.loads(out.strip().splitlines()[-1])


class Bench:
    def __init__(self, args: argparse.Namespace, server: ScriptedLLMServer, folder: Path) -> None:
        self.args = args
        llm = {"provider": "openai", "config": {"model": "scripted", "api_key": "k", "base_url": server.base_url}}
        self.config = {"llm": llm, "embedder": {"provider": "hashing", "config": {"dims": args.dims}},
                       "graph_store": {"provider": "neo4j", "config": {"url": args.neo4j_url}},
                       "history_db_path": str(folder / "history.db")}
        self.config_file = folder / "config.json"
        self.config_file.write_text(json.dumps(self.config))
        self.figures: dict[tuple[str, str], list[float]] = {}

    def note(self, row: str, variant: str, seconds: float) -> None:
        self.figures.setdefault((row, variant), []).append(seconds)

    def cli(self, variant: str, env: dict[str, str], run: int) -> None:
        base = [sys.executable, "-m", "graphmem.cli.main"]
        user = ["--user", f"coldstart-{variant}", "--config", str(self.config_file)]
        for row, args in (("graphmem search", ["search", "where do I live", *user]),
                          ("graphmem add --no-infer", ["add", MESSAGE, "--no-infer", *user]),
                          ("graphmem add (scripted model, latency 0)", ["add", MESSAGE, *user])):
            seconds, _ = timed([*base, *args], env)
            if run >= 0:
                self.note(row, variant, seconds)
                self.note(f"{row}: CPU s", variant, LAST_CPU[0])
        out = child({"config": self.config, "user": f"coldstart-{variant}"}, env)
        if run >= 0:
            self.note("import graphmem + Memory.from_config", variant, out["import_s"] + out["from_config_s"])
            self.note("Memory.from_config", variant, out["from_config_s"])
        for row, code in FLOORS.items():  # what the dependencies cost by themselves, in a fresh process
            _, said = timed([sys.executable, "-c", code], env)
            if run >= 0:
                self.note(row, variant, float(said.strip()))

    def first_adds(self, variant: str, env: dict[str, str], restart: int) -> None:
        # this checkout's launcher warms the statements after a start; the baseline's did not (--no-warm)
        warming = [] if variant == "after" else ["--no-warm"]
        self.restart(variant, warming)
        # a short-lived process: "warm_up": false where the source has it (before it, nothing could turn
        # the warming and the preparing threads off)
        config = {**self.config, "warm_up": False} if variant == "after" else self.config
        job = {"config": config, "user": f"coldstart-first-{variant}-{restart}", "adds": 1, "messages": [MESSAGE]}
        first = child(job, env)
        self.note("first add, new process, server just started", variant, first["adds_s"][0])
        job = {**job, "user": f"coldstart-warm-{variant}-{restart}", "adds": 6}
        warm = child(job, env)
        self.note("first add, new process, warm server", variant, warm["adds_s"][0])
        self.note("warm add (adds 2-6 of a process)", variant, statistics.median(warm["adds_s"][1:]))
        if variant == "after":
            # a long-lived process (the default "warm_up": clients prepared in the background) whose
            # first add comes a few seconds after it started, on a server started just before it: what
            # the server's start costs, without the new process's own first-use imports
            self.restart(variant, warming)
            job = {"config": self.config, "user": f"coldstart-prepared-{variant}-{restart}", "adds": 1,
                   "messages": [MESSAGE], "settle": 3}
            self.note("first add, long-lived process, server just started", variant, child(job, env)["adds_s"][0])

    def restart(self, variant: str, warming: list[str]) -> None:
        bolt, http = self.args.launcher_port
        launcher = [sys.executable, "-m", "graphmem.launcher"]
        ports = ["--bolt-port", str(bolt), "--http-port", str(http)]
        subprocess.run([*launcher, "stop", *ports], capture_output=True, check=False)
        began = time.perf_counter()
        started = subprocess.run([*launcher, "start", *ports, *warming], capture_output=True, text=True, check=True, env=child_env(None))
        self.note("launcher start (with its warming)", variant, time.perf_counter() - began)
        print(f"  {variant}: {started.stderr.strip().splitlines()[-1]}", file=sys.stderr)

    def cleanup(self) -> None:
        from graphmem import Memory

        with Memory({**self.config, "warm_up": False}) as memory:
            for (_, variant), _values in list(self.figures.items()):
                memory.delete_all(user_id=f"coldstart-{variant}")
            for variant in ("before", "after"):
                for restart in range(self.args.restarts):
                    for kind in ("first", "warm", "prepared"):
                        memory.delete_all(user_id=f"coldstart-{kind}-{variant}-{restart}")


def report(bench: Bench, variants: list[str]) -> None:
    rows = list(dict.fromkeys(row for row, _ in bench.figures))
    head = "| command | " + " | ".join(f"{v} p50 s" for v in variants) + (" | after / before |" if len(variants) == 2 else " |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for row in rows:
        p50 = [statistics.median(bench.figures[(row, v)]) if (row, v) in bench.figures else None for v in variants]
        cells = [f"{x:.3f}" if x is not None else "" for x in p50]
        ratio = f" | {p50[1] / p50[0]:.2f}x |" if len(variants) == 2 and p50[0] and p50[1] else " |"
        print(f"| {row} | " + " | ".join(cells) + ratio)
    if bench.args.restarts:
        for v in variants:
            first = bench.figures[("first add, new process, server just started", v)]
            warm = bench.figures[("warm add (adds 2-6 of a process)", v)]
            print(f"{v}: first add after a server start / warm add = {statistics.median(first) / statistics.median(warm):.1f}x "
                  f"(each run: {', '.join(f'{a:.2f}/{b:.2f}' for a, b in zip(first, warm, strict=True))} s)")
            cold = bench.figures[("first add, new process, warm server", v)]
            print(f"{v}: what the server's start adds to a new process's first add: "
                  f"{statistics.median(first) / statistics.median(cold):.2f}x its first add on a warm server")
            prepared = bench.figures.get(("first add, long-lived process, server just started", v))
            if prepared:
                print(f"{v}: first add of a long-lived process after a server start / warm add = "
                      f"{statistics.median(prepared) / statistics.median(warm):.1f}x")
    print(json.dumps({f"{row} [{v}]": [round(x, 3) for x in values] for (row, v), values in bench.figures.items()}))


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp, ScriptedLLMServer() as server:
        folder = Path(tmp)
        model = SharedModel()
        model.entities = SCRIPT[0].entities
        server.set_handler(model)
        bench = Bench(args, server, folder)
        envs = {"after": child_env(None)}
        if args.baseline:
            envs = {"before": child_env(baseline_tree(args.baseline, Path(tempfile.mkdtemp(dir=tmp)))), **envs}
        for variant, env in envs.items():
            bench.cli(variant, env, -1)  # untimed: bytecode written, files in the OS cache, server plans made
        for run in range(args.runs):
            for variant, env in envs.items():
                bench.cli(variant, env, run)
        for restart in range(args.restarts):
            for variant, env in envs.items():
                bench.first_adds(variant, env, restart)
        bench.cleanup()
        print(f"load average {os.getloadavg()[0]:.1f}; {args.runs} runs; commit {common.git_commit()}, baseline {args.baseline}")
        report(bench, list(envs))


if __name__ == "__main__":
    main()
