"""Bulk import rate: Memory.add_many(infer=False) on seeded chat lines, per store and embedder.

Each item is one add of a user and an assistant message (2 messages) for one of --scopes users,
with a unique idempotency key; --batch-size adds per transaction and per embedding call, --workers
lanes (scopes spread over them, see graphmem/ingest/bulk.py). Reported: messages per second for the whole
run (embedding included) and the seconds during which the embedder was busy (at least one call
running; lanes overlap, so this is not a sum), so a slow embedder (MiniLM on CPU) shows where it
bounds the rate. A resume pass (every key imported already) is timed too. --days N dates item i
(i mod N) days back, so time phrases resolve against N different days (0: no timestamp, the time
of the call).

    python -m benchmarks.scale.bulk_import --stores embedded neo4j --messages 20000
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from benchmarks import common
from graphmem import Memory
from graphmem.embeddings import HashingEmbedder
from graphmem.retrieval import when

WORDS = ("coffee", "denver", "tennis", "sister", "dog", "cat", "job", "nurse", "spanish", "boston", "tea", "hike")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.scale.bulk_import", description=__doc__.split("\n\n")[0])
    p.add_argument("--stores", nargs="+", default=["embedded", "neo4j"], choices=["embedded", "neo4j"])
    p.add_argument("--embedders", nargs="+", default=["hashing"], choices=["hashing", "minilm"])
    p.add_argument("--model-dir", default=str(common.DEFAULT_MODEL_DIR))
    p.add_argument("--messages", type=int, default=20_000)
    p.add_argument("--scopes", type=int, default=100)
    p.add_argument("--batch-size", type=int, default=500)
    p.add_argument("--workers", type=int, default=None, help="lanes (default: config bulk.workers)")
    p.add_argument("--days", type=int, default=0, help="spread the items' timestamps over this many days")
    p.add_argument("--server-pid", type=int, default=None,
                   help="the local Neo4j's process id: its CPU seconds during the import are reported too")
    p.add_argument("--neo4j-url", default=None, help="use this Neo4j instead of starting a private one")
    p.add_argument("--bolt-port", type=int, default=7691)
    p.add_argument("--http-port", type=int, default=7478)
    p.add_argument("--out", default=None)
    return p.parse_args(argv)


def items(n_adds: int, scopes: int, run: str, days: int = 0) -> list[dict[str, Any]]:
    out = []
    start = datetime.now(timezone.utc) - timedelta(hours=1)
    for i in range(n_adds):
        a, b = WORDS[i % len(WORDS)], WORDS[(i * 7) % len(WORDS)]
        item = {"messages": [{"role": "user", "content": f"I talked about {a} and {b} today, note {i}."},
                             {"role": "assistant", "content": f"Noted: {a}, {b} ({i})."}],
                "user_id": f"bulk-{run}-{i % scopes}", "key": f"{run}-{i}"}
        if days:
            item["timestamp"] = (start - timedelta(days=i % days)).isoformat()
        out.append(item)
    return out


class CountingEmbedder:
    """Delegates to an embedder and adds up the seconds during which at least one call runs."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.seconds = inner, 0.0
        self.dims, self.name = inner.dims, inner.name
        self._lock, self._running, self._since = threading.Lock(), 0, 0.0

    def embed(self, texts: list[str]) -> list[list[float]]:
        with self._lock:
            self._running += 1
            if self._running == 1:
                self._since = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            with self._lock:
                self._running -= 1
                if self._running == 0:
                    self.seconds += time.perf_counter() - self._since

    def embed_one(self, text: str) -> list[float]:
        return self.embed([text])[0]

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def run_one(kind: str, embedder_name: str, args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    inner = common.load_minilm(args.model_dir) if embedder_name == "minilm" else HashingEmbedder(dims=384)
    embedder = CountingEmbedder(inner)
    config: dict[str, Any] = {"history_db_path": str(workdir / f"history-{kind}-{embedder_name}.db"),
                              "llm": {"provider": "openai_compatible", "config": {"base_url": "http://127.0.0.1:9/v1"}}}
    private = None
    if kind == "neo4j":
        private = None if args.neo4j_url else common.PrivateNeo4j(args.bolt_port, args.http_port, None)
        config["graph_store"] = {"provider": "neo4j", "config": {"url": args.neo4j_url or private.uri}}
    else:
        config["graph_store"] = {"provider": "embedded", "config": {"path": str(workdir / f"graph-{embedder_name}")}}
    run = uuid.uuid4().hex[:8]
    data = items(args.messages // 2, args.scopes, run, args.days)
    memory = Memory(config, embedder=embedder)  # type: ignore[arg-type]
    when._RESOLVED.clear()  # each run resolves its time phrases itself, as a fresh process would
    try:
        memory.add_many(items(args.batch_size, 2, f"warm-{run}"), infer=False, batch_size=args.batch_size, workers=args.workers)
        embedder.seconds = 0.0
        server_before = _process_cpu(args.server_pid) if kind == "neo4j" else None
        started, cpu = time.perf_counter(), time.process_time()
        result = memory.add_many(data, infer=False, batch_size=args.batch_size, workers=args.workers)
        seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
        server_after = _process_cpu(args.server_pid) if server_before is not None else None
        server_cpu = None if server_before is None or server_after is None else server_after - server_before
        embed_seconds = embedder.seconds
        started = time.perf_counter()
        again = memory.add_many(data, infer=False, batch_size=args.batch_size, workers=args.workers)
        resume_seconds = time.perf_counter() - started
        for s in range(args.scopes):
            memory.delete_all(user_id=f"bulk-{run}-{s}")
        for s in range(2):
            memory.delete_all(user_id=f"bulk-warm-{run}-{s}")
    finally:
        memory.close()
        if private is not None:
            private.stop()
    assert result["added"] == len(data) and again["skipped"] == len(data), (result, again)
    return {"store": kind, "embedder": embedder.name, "adds": result["added"], "messages": result["messages"],
            "seconds": round(seconds, 2), "messages_per_second": round(result["messages"] / seconds, 1),
            "embedding_seconds": round(embed_seconds, 2),
            "messages_per_second_without_embedding": round(result["messages"] / max(seconds - embed_seconds, 1e-9), 1),
            "resume_pass_seconds": round(resume_seconds, 2),
            "client_cpu_ms_per_1000_messages": round(1e6 * cpu / result["messages"]),
            "server_cpu_ms_per_1000_messages": None if server_cpu is None else round(1e6 * server_cpu / result["messages"])}


def _process_cpu(pid: int | None) -> float | None:
    """User + system CPU seconds of a local process (Linux /proc), or None."""
    if pid is None:
        return None
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    runs = []
    with tempfile.TemporaryDirectory(prefix="graphmem-bulk-") as tmp:
        for kind in args.stores:
            for name in args.embedders:
                print(f"importing {args.messages:,} messages into {kind} with {name}", file=sys.stderr)
                runs.append(run_one(kind, name, args, Path(tmp)))
    print(common.table(["store", "embedder", "messages", "seconds", "msg/s", "embedding s", "msg/s w/o embedding", "resume pass s",
                        "client CPU ms / 1k msg", "server CPU ms / 1k msg"],
                       [[r["store"], r["embedder"], r["messages"], r["seconds"], r["messages_per_second"], r["embedding_seconds"],
                         r["messages_per_second_without_embedding"], r["resume_pass_seconds"], r["client_cpu_ms_per_1000_messages"],
                         r["server_cpu_ms_per_1000_messages"] if r["server_cpu_ms_per_1000_messages"] is not None else "-"]
                        for r in runs]))
    server = common.neo4j_server_version(args.neo4j_url) if args.neo4j_url else None
    path = common.write_result("bulk_import", {"machine": common.machine_info(server), "versions": common.package_versions(),
                                               "parameters": {k: v for k, v in vars(args).items() if k != "out"}, "runs": runs},
                               args.out)
    print(f"\nwritten {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
