"""Search latency of local embedders side by side: the default search (limit=10), query embedding
included, per embedder, its searches interleaved question by question in one process so the
ratios hold on a busy machine. Recall is measured by benchmarks.retrieval.locomo and benchmarks.retrieval.beam.

Per conversation every embedder gets its own embedded store (documents from the benchmarks' disk
cache, common.disk_cache_path, so only queries meet the model); then each question is searched
once per embedder, the embedders' order rotating from one question to the next. One untimed search
per embedder first (the hubness probes' first embedding). No LLM is called.

    python -m benchmarks.cost.embedder_latency beam ../shared/data/beam/500K --embedders bge bge-int8
    python -m benchmarks.cost.embedder_latency locomo ../shared/data/locomo/locomo_dev3.json --embedders minilm minilm-int8 bge bge-int8
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.data import beam_data, locomo_data
from benchmarks.retrieval import beam, locomo
from graphmem import Memory
from graphmem.stores.embedded import EmbeddedStore
from graphmem.testing import ScriptedLLMServer

LOCOMO_ARGS = argparse.Namespace(source="turns", bare_turns=False, scope="conversation")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.cost.embedder_latency", description=__doc__.split("\n\n")[0])
    p.add_argument("kind", choices=["beam", "locomo"])
    p.add_argument("data", help="a BEAM-format folder or a LOCOMO-format JSON file")
    p.add_argument("--embedders", nargs="+", default=["minilm", "minilm-int8", "bge", "bge-int8"],
                   help=f"{', '.join(locomo.EMBEDDERS)}, or ONNX model folders")
    p.add_argument("--conversations", type=int, default=None, help="only the first N conversations")
    p.add_argument("--out", default=None, help="JSON output (default benchmarks/results/embedder-latency-<kind>.json)")
    return p.parse_args(argv)


class Lane:
    """One embedder's memory over its own store, and its search timings."""

    def __init__(self, choice: str, kind: str, workdir: Path, server: ScriptedLLMServer) -> None:
        self.choice = choice
        self.embedder = locomo.load_embedder(choice, kind)
        config = {"llm": {"provider": "openai_compatible", "config": {"base_url": server.base_url, "api_key": "none", "model": "none"}},
                  "history_db_path": str(workdir / f"history-{choice}.db"), "context": {"summary_every": 0}}
        store = EmbeddedStore(workdir / f"graph-{choice}", self.embedder.dims)
        self.memory = Memory(config, store=store, embedder=self.embedder)
        self.total: list[float] = []
        self.query: list[float] = []

    def search(self, question: str, user_ids: list[str], timed: bool = True) -> None:
        self.embedder.searching = True
        started, embedding = time.perf_counter(), self.embedder.query_ms
        for uid in user_ids:
            self.memory.search(question, user_id=uid, limit=10)
        if timed:
            self.total.append((time.perf_counter() - started) * 1000)
            self.query.append(self.embedder.query_ms - embedding)
        self.embedder.searching = False


def conversations(args: argparse.Namespace) -> list[tuple[str, Any, list[str]]]:
    """(name, conversation, questions) of the chosen set."""
    if args.kind == "beam":
        found = [(c.name, c, [q.question for q in c.questions]) for c in beam_data.load(args.data)]
    else:
        found = [(c.sample_id, c, [q.question for q in c.questions if q.evidence]) for c in locomo_data.load(args.data)]
    return found[: args.conversations] if args.conversations else found


def ingest(lane: Lane, kind: str, name: str, conv: Any) -> list[str]:
    if kind == "beam":
        uid = f"beam-{name}"
        beam.ingest(lane.memory, lane.embedder, conv, uid)
        return [uid]
    user_ids = locomo.scopes_of(conv, LOCOMO_ARGS, "lat")
    locomo.ingest(lane.memory, lane.embedder, conv, LOCOMO_ARGS, user_ids)
    return sorted(set(user_ids.values()))


def run(args: argparse.Namespace) -> list[Lane]:
    with tempfile.TemporaryDirectory(prefix="graphmem-embedder-latency-") as tmp, ScriptedLLMServer() as server:
        lanes = [Lane(choice, args.kind, Path(tmp), server) for choice in args.embedders]
        turn = 0
        for name, conv, questions in conversations(args):
            scopes = [ingest(lane, args.kind, name, conv) for lane in lanes]
            for lane, user_ids in zip(lanes, scopes, strict=True):
                lane.search("warm up", user_ids, timed=False)
            for question in questions:
                order = list(range(len(lanes)))[turn % len(lanes):] + list(range(len(lanes)))[: turn % len(lanes)]
                turn += 1
                for i in order:
                    lanes[i].search(question, scopes[i])
            for lane, user_ids in zip(lanes, scopes, strict=True):
                for uid in user_ids:
                    lane.memory.delete_all(user_id=uid)
        for lane in lanes:
            lane.memory.close()
        assert not server.requests, "the latency benchmark must not call the LLM"
    return lanes


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    lanes = run(args)
    rows: dict[str, Any] = defaultdict(dict)
    for lane in lanes:
        rows[lane.choice] = {"embedder": repr(lane.embedder.cache.inner), "searches": len(lane.total),
                             "latency_ms": common.percentiles(lane.total, (50, 95)),
                             "query_embedding_ms": common.percentiles(lane.query, (50, 95)),
                             "without_query_embedding_ms": common.percentiles([t - q for t, q in zip(lane.total, lane.query, strict=True)], (50, 95))}
    first = lanes[0].choice
    print(common.table(["embedder", "searches", "p50 ms", "p95 ms", "q.emb p50", "q.emb p95", "w/o q.emb p95", f"p50 / {first}"],
                       [[c, r["searches"], r["latency_ms"]["p50"], r["latency_ms"]["p95"], r["query_embedding_ms"]["p50"],
                         r["query_embedding_ms"]["p95"], r["without_query_embedding_ms"]["p95"],
                         round(r["latency_ms"]["p50"] / rows[first]["latency_ms"]["p50"], 2)] for c, r in rows.items()]))
    path = common.write_result(f"embedder-latency-{args.kind}", {
        "machine": common.machine_info(), "versions": common.package_versions(), "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": common.git_commit(), "parameters": vars(args), "embedders": dict(rows)}, args.out)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
