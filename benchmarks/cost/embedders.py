"""Local embedders side by side: load time, resident memory, query-embedding latency (what every
search pays) and document throughput (what every add pays), in one run so the ratios hold on a busy
machine. Recall is measured by benchmarks.retrieval.locomo and benchmarks.retrieval.beam with --embedder.

    python -m benchmarks.cost.embedders --embedders minilm bge --queries 200

Each model is loaded in its own subprocess (so one model's memory is not counted in the next).
Queries: the LOCOMO dev questions (short); documents: BEAM dev messages (long, truncated at the
model's max_length) when the data is there, else the LOCOMO turns.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.retrieval.locomo import onnx_model


def _rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _model_file(model: Any) -> Path:
    """The file the session loaded: the int8 copy at int8."""
    from graphmem.embeddings import quantize

    source = model.model_dir / "model.onnx"
    return quantize.cached_path(source) if model.precision == "int8" else source


def measure(choice: str, queries: int, documents: int) -> dict[str, Any]:
    """One model, in this process: what the parent prints."""
    from benchmarks.data.beam_data import load as load_beam
    from benchmarks.data.locomo_data import load as load_locomo

    locomo = load_locomo(common.SHARED / "data" / "locomo" / "locomo_dev3.json")
    questions = [q.question for c in locomo for q in c.questions][:queries]
    beam_dir = common.SHARED / "data" / "beam" / "500K" / "1"
    docs = [m.content for m in load_beam(beam_dir)[0].messages][:documents] if beam_dir.is_dir() else \
        [d.content(True) for c in locomo for s in c.sessions for d in s][:documents]
    before = _rss_mib()
    started = time.perf_counter()
    model = onnx_model(choice)
    load_s = time.perf_counter() - started
    model.embed_query("warm up")
    loaded = _rss_mib() - before
    timings = []
    for q in questions:
        t = time.perf_counter()
        model.embed_query(q)
        timings.append((time.perf_counter() - t) * 1000)
    started = time.perf_counter()
    model.embed(docs)
    doc_s = time.perf_counter() - started
    return {"embedder": repr(model), "load_s": round(load_s, 2), "rss_mib": round(loaded, 1), "rss_after_docs_mib": round(_rss_mib() - before, 1),
            "model_mib": round(_model_file(model).stat().st_size / 2**20, 1),
            "query_ms": common.percentiles(timings, (50, 95)), "docs_per_s": round(len(docs) / doc_s, 1), "documents": len(docs)}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.cost.embedders", description=__doc__.split("\n\n")[0])
    p.add_argument("--embedders", nargs="+", default=["minilm", "bge"])
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--documents", type=int, default=64)
    p.add_argument("--one", default=None, help=argparse.SUPPRESS)  # the subprocess's model
    p.add_argument("--out", default=None)
    args = p.parse_args(argv)
    if args.one:
        print(json.dumps(measure(args.one, args.queries, args.documents)))
        return 0
    rows = []
    for choice in args.embedders:
        out = subprocess.run([sys.executable, "-m", "benchmarks.cost.embedders", "--one", choice, "--queries", str(args.queries),
                              "--documents", str(args.documents)], capture_output=True, text=True, check=True)
        rows.append({"choice": choice, **json.loads(out.stdout.strip().splitlines()[-1])})
    print(common.table(["embedder", "load s", "RSS MiB loaded", "RSS MiB after docs", "model MiB", "query p50 ms", "query p95 ms", "docs/s"],
                       [[r["choice"], r["load_s"], r["rss_mib"], r["rss_after_docs_mib"], r["model_mib"], r["query_ms"]["p50"], r["query_ms"]["p95"],
                         r["docs_per_s"]] for r in rows]))
    path = common.write_result("embedders", {"machine": common.machine_info(), "versions": common.package_versions(),
                                             "parameters": vars(args), "models": rows}, args.out)
    print(f"written {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
