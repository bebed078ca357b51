"""Bulk import rate: Memory.add_many(infer=False) on seeded chat lines, per store and embedder.

Each item is one add of a user and an assistant message (2 messages) for one of --scopes users,
with a unique idempotency key; --batch-size adds per transaction and per embedding call. Reported:
messages per second for the whole run (embedding included) and the embedder's own share, so a
slow embedder (MiniLM on CPU) shows where it bounds the rate. A resume pass (every key imported
already) is timed too.

    python -m benchmarks.bulk_import --stores embedded neo4j --messages 20000
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks import common
from graphmem import Memory
from graphmem.embeddings import HashingEmbedder

WORDS = ("coffee", "denver", "tennis", "sister", "dog", "cat", "job", "nurse", "spanish", "boston", "tea", "hike")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.bulk_import", description=__doc__.split("\n\n")[0])
    p.add_argument("--stores", nargs="+", default=["embedded", "neo4j"], choices=["embedded", "neo4j"])
    p.add_argument("--embedders", nargs="+", default=["hashing"], choices=["hashing", "minilm"])
    p.add_argument("--model-dir", default=str(common.DEFAULT_MODEL_DIR))
    p.add_argument("--messages", type=int, default=20_000)
    p.add_argument("--scopes", type=int, default=100)
    p.add_argument("--batch-size", type=int, default=500)
    p.add_argument("--neo4j-url", default=None, help="use this Neo4j instead of starting a private one")
    p.add_argument("--bolt-port", type=int, default=7691)
    p.add_argument("--http-port", type=int, default=7478)
    p.add_argument("--out", default=None)
    return p.parse_args(argv)


def items(n_adds: int, scopes: int, run: str) -> list[dict[str, Any]]:
    out = []
    for i in range(n_adds):
        a, b = WORDS[i % len(WORDS)], WORDS[(i * 7) % len(WORDS)]
        out.append({"messages": [{"role": "user", "content": f"I talked about {a} and {b} today, note {i}."},
                                 {"role": "assistant", "content": f"Noted: {a}, {b} ({i})."}],
                    "user_id": f"bulk-{run}-{i % scopes}", "key": f"{run}-{i}"})
    return out


class CountingEmbedder:
    """Delegates to an embedder and adds up the seconds spent in it."""

    def __init__(self, inner: Any) -> None:
        self.inner, self.seconds = inner, 0.0
        self.dims, self.name = inner.dims, inner.name

    def embed(self, texts: list[str]) -> list[list[float]]:
        started = time.perf_counter()
        try:
            return self.inner.embed(texts)
        finally:
            self.seconds += time.perf_counter() - started

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
    data = items(args.messages // 2, args.scopes, run)
    memory = Memory(config, embedder=embedder)  # type: ignore[arg-type]
    try:
        memory.add_many(items(args.batch_size, 2, f"warm-{run}"), infer=False, batch_size=args.batch_size)
        embedder.seconds = 0.0
        started = time.perf_counter()
        result = memory.add_many(data, infer=False, batch_size=args.batch_size)
        seconds = time.perf_counter() - started
        embed_seconds = embedder.seconds
        started = time.perf_counter()
        again = memory.add_many(data, infer=False, batch_size=args.batch_size)
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
            "resume_pass_seconds": round(resume_seconds, 2)}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    runs = []
    with tempfile.TemporaryDirectory(prefix="graphmem-bulk-") as tmp:
        for kind in args.stores:
            for name in args.embedders:
                print(f"importing {args.messages:,} messages into {kind} with {name}", file=sys.stderr)
                runs.append(run_one(kind, name, args, Path(tmp)))
    print(common.table(["store", "embedder", "messages", "seconds", "msg/s", "embedding s", "msg/s w/o embedding", "resume pass s"],
                       [[r["store"], r["embedder"], r["messages"], r["seconds"], r["messages_per_second"], r["embedding_seconds"],
                         r["messages_per_second_without_embedding"], r["resume_pass_seconds"]] for r in runs]))
    server = common.neo4j_server_version(args.neo4j_url) if args.neo4j_url else None
    path = common.write_result("bulk_import", {"machine": common.machine_info(server), "versions": common.package_versions(),
                                               "parameters": {k: v for k, v in vars(args).items() if k != "out"}, "runs": runs},
                               args.out)
    print(f"\nwritten {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
