"""What relation facts add to an add's one embedding request: for each message of the add_cost script
(benchmarks/cost/add_script.py), the batch an add sends before facts (entity names + memory facts) and
with them (+ one fact per relation, graphmem.schema.facts), embedded alternately ``--repeats`` times
with the real MiniLM ONNX model; median ms per add and the inputs per add.

    python -m benchmarks.cost.fact_embedding_cost --repeats 10
"""

from __future__ import annotations

import argparse
import statistics
import time

from benchmarks import common
from benchmarks.cost.add_script import SCRIPT, USER
from graphmem.schema.facts import relation_fact


def batches() -> list[tuple[list[str], list[str]]]:
    out = []
    for step in SCRIPT:
        types = dict(step.entities)
        before = [name for name, _ in step.entities] + list(step.facts)
        facts = [relation_fact(s, types.get(s), r, d, types.get(d), self_name=USER) for s, r, d in step.relations]
        out.append((before, before + facts))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.cost.fact_embedding_cost", description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=10)
    p.add_argument("--model-dir", default=str(common.DEFAULT_MODEL_DIR))
    args = p.parse_args(argv)
    embedder = common.load_minilm(args.model_dir)
    pairs = batches()
    embedder.embed(pairs[0][1])  # warm
    times: dict[str, list[float]] = {"before": [], "with facts": []}
    for _ in range(args.repeats):
        for before, after in pairs:
            for label, texts in (("before", before), ("with facts", after)):  # alternating: load falls on both alike
                started = time.perf_counter()
                embedder.embed(texts)
                times[label].append((time.perf_counter() - started) * 1000)
    inputs = {"before": statistics.mean(len(b) for b, _ in pairs), "with facts": statistics.mean(len(a) for _, a in pairs)}
    rows = [[k, round(inputs[k], 2), round(statistics.median(v), 2), common.percentiles(v, (95,))["p95"]] for k, v in times.items()]
    print(common.table(["batch", "inputs/add", "embed ms p50", "embed ms p95"], rows))
    print(f"ratio p50: {statistics.median(times['with facts']) / statistics.median(times['before']):.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
