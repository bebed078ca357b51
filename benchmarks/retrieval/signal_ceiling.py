"""What the default search can gain from a better embedder: the signals' pools beside the fused result.

For each embedder, on a LOCOMO-format file or a BEAM-format folder (embedded store, the same ingest
and the same metric as benchmarks.retrieval.locomo / benchmarks.retrieval.beam), every question is searched with the
``vector`` and ``bm25`` presets at limit 50 and with the default (``hybrid``) at limit 10, and R@10
is reported for:

- ``vector`` / ``bm25``: each signal alone (R@10 of its top 10);
- ``union@10``: the gold found in the vector top 10 *or* the BM25 top 10 (20 places, so it can
  exceed what any 10 results can hold, and the default can exceed it: its neighbours, time and
  session signals reach messages neither list holds);
- ``union@50``: the same over both top 50 (what the fusion has in front of it, roughly);
- ``default``: the default search's R@10.

Then, for each pair of embedders, how much of each figure's gain the default keeps. The issue's
question "the vector signal gains X with a better model, how much of X does the default keep?" has
an upper bound the fusion cannot pass: the part of X on gold the words do not already find, i.e.
the gain of ``union@10`` / ``union@50``. Per category (LOCOMO) or ability (BEAM).

    python -m benchmarks.retrieval.signal_ceiling locomo ../shared/data/locomo/locomo_dev3.json --embedders minilm bge
    python -m benchmarks.retrieval.signal_ceiling beam ../shared/data/beam/500K --embedders minilm bge
"""

from __future__ import annotations

import argparse
import itertools
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.retrieval import beam, locomo
from graphmem import Memory
from graphmem.testing import ScriptedLLMServer

POOL = 50
FIGURES = ("vector", "bm25", "union@10", f"union@{POOL}", "default")


def _found(ranked: list[list[str]], k: int) -> set[str]:
    return {i for ids in ranked[:k] for i in ids}


def figures(vector: list[list[str]], bm25: list[list[str]], default: list[list[str]], gold: set[str]) -> dict[str, float]:
    """The five R@10-style figures of one question (ranked lists of id groups, best first)."""
    def share(found: set[str]) -> float:
        return len(found & gold) / len(gold)

    return {"vector": share(_found(vector, 10)), "bm25": share(_found(bm25, 10)),
            "union@10": share(_found(vector, 10) | _found(bm25, 10)),
            f"union@{POOL}": share(_found(vector, POOL) | _found(bm25, POOL)), "default": share(_found(default, 10))}


def _locomo_questions(memory: Memory, embedder: Any, path: Path) -> list[tuple[str, dict[str, float]]]:
    args = locomo.parse_args([str(path)])
    out = []
    for conv in locomo.load(path):
        user_ids = locomo.scopes_of(conv, args, uuid.uuid4().hex[:8])
        locomo.ingest(memory, embedder, conv, args, user_ids)
        scopes = sorted(set(user_ids.values()))
        embedder.searching = True
        for q in (q for q in conv.questions if q.evidence and q.category in locomo.MAIN_CATEGORIES):
            ranked = {p: locomo.search(memory, q.question, scopes, p, POOL if p != "hybrid" else 10) for p in ("vector", "bm25", "hybrid")}
            out.append((f"cat{q.category}", figures(ranked["vector"], ranked["bm25"], ranked["hybrid"], set(q.evidence))))
        embedder.searching = False
        for uid in scopes:
            memory.delete_all(user_id=uid)
    return out


def _beam_questions(memory: Memory, embedder: Any, path: Path) -> list[tuple[str, dict[str, float]]]:
    out = []
    for conv in beam.load(path):
        user_id = f"beam-{uuid.uuid4().hex[:8]}-{conv.name}"
        beam.ingest(memory, embedder, conv, user_id)
        embedder.searching = True
        for q in conv.questions:
            ranked = {p: [[str(i)] for i in beam.ranked_ids(memory, q.question, user_id, p, POOL if p != "hybrid" else 10)]
                      for p in ("vector", "bm25", "hybrid")}
            out.append((q.ability, figures(ranked["vector"], ranked["bm25"], ranked["hybrid"], {str(i) for i in q.gold})))
        embedder.searching = False
        memory.delete_all(user_id=user_id)
    return out


def measure(kind: str, path: Path, choice: str, workdir: Path) -> dict[str, dict[str, float]]:
    """{group: {figure: mean}} with group "all" and one per category / ability, and "n"."""
    embedder = locomo.load_embedder(choice, kind)
    store, _, _ = locomo.open_store("embedded", argparse.Namespace(neo4j_url=None), embedder.dims, workdir / choice)
    with ScriptedLLMServer() as server:
        config = {"llm": {"provider": "openai_compatible", "config": {"base_url": server.base_url, "api_key": "none", "model": "none"}},
                  "history_db_path": str(workdir / f"history-{choice}.db"), "context": {"summary_every": 0}}
        memory = Memory(config, store=store, embedder=embedder)
        try:
            rows = (_locomo_questions if kind == "locomo" else _beam_questions)(memory, embedder, path)
        finally:
            memory.close()
        assert not server.requests, "this benchmark must not call the LLM"
    groups: dict[str, list[dict[str, float]]] = defaultdict(list)
    for group, row in rows:
        groups["all"].append(row)
        groups[group].append(row)
    return {g: {**{f: round(sum(r[f] for r in rs) / len(rs), 4) for f in FIGURES}, "n": len(rs)} for g, rs in sorted(groups.items())}


def kept(low: dict[str, float], high: dict[str, float]) -> dict[str, float | None]:
    """The default's gain from ``low`` to ``high`` as a share of each signal figure's gain."""
    gain = high["default"] - low["default"]
    return {f: (round(gain / (high[f] - low[f]), 2) if abs(high[f] - low[f]) > 1e-9 else None) for f in FIGURES if f != "default"}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.retrieval.signal_ceiling", description=__doc__.split("\n\n")[0])
    p.add_argument("kind", choices=["locomo", "beam"])
    p.add_argument("path", help="a LOCOMO-format file or a BEAM-format folder")
    p.add_argument("--embedders", nargs="+", default=["minilm", "bge"], help="short names of benchmarks.retrieval.locomo.EMBEDDERS, or ONNX folders")
    p.add_argument("--out", default=None, help="JSON output (default benchmarks/results/signal_ceiling-<kind>.json)")
    args = p.parse_args(argv)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="graphmem-ceiling-") as tmp:
        for choice in args.embedders:
            started = time.perf_counter()
            results[choice] = measure(args.kind, Path(args.path), choice, Path(tmp))
            print(f"{choice}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    groups = list(next(iter(results.values())))
    print(common.table(["embedder", "group", "n", *FIGURES],
                       [[e, g, results[e][g]["n"], *(results[e][g][f] for f in FIGURES)] for e in results for g in groups]))
    gains = {}
    for low, high in itertools.pairwise(args.embedders):
        gains[f"{low}->{high}"] = {g: kept(results[low][g], results[high][g]) for g in groups}
        print(f"\nshare of each figure's gain {low} -> {high} the default keeps (None: the figure did not move)")
        print(common.table(["group", *FIGURES[:-1]], [[g, *(gains[f"{low}->{high}"][g][f] for f in FIGURES[:-1])] for g in groups]))
    path = common.write_result(f"signal_ceiling-{args.kind}", {
        "machine": common.machine_info(), "versions": common.package_versions(), "commit": common.git_commit(),
        "parameters": vars(args), "pool": POOL, "results": results, "kept": gains}, args.out)
    print(f"\nwritten {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
