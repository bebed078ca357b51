"""Leave-one-dataset-out report of the default ranking, memories and relations.

For every dataset left out and every embedder: today's default (``today``), the setting chosen on
the other datasets (``held-out``), each single signal, and the held-out setting's margin over the
best single signal. Then the rules of the setting chosen on all datasets, each with its held-out
effect per fold (kept only where it helps on folds it was not chosen on: benchmarks.retrieval.lodo).

    python -m benchmarks.retrieval.generalisation                      # every dev set, MiniLM and bge-small
    python -m benchmarks.retrieval.generalisation --half relations --embedders minilm
    python -m benchmarks.retrieval.generalisation --personas other.json --pathquestion other/  # sets of the same formats

Pools (what the store hands the ranking) are captured once per dataset and embedder and kept under
the temp folder (benchmarks.retrieval.pools), so a second run only ranks.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.retrieval import locomo, lodo, memory_fit, relation_fit, relation_sets
from benchmarks.retrieval.memory_pools import memory_pools
from benchmarks.retrieval.pools import relation_pools

DATA = relation_sets.SHARED_DATA


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.retrieval.generalisation", description=__doc__.split("\n\n")[0])
    p.add_argument("--half", nargs="+", default=["relations", "memories"], choices=["relations", "memories"])
    p.add_argument("--embedders", nargs="+", default=["minilm", "bge"], help="short names of benchmarks.locomo.EMBEDDERS")
    p.add_argument("--relation-sets", nargs="+", default=list(relation_sets.DATASETS), choices=list(relation_sets.DATASETS))
    p.add_argument("--personas", type=Path, default=None, help="a personas-format file (default ../shared/data/personas)")
    p.add_argument("--pathquestion", type=Path, default=None, help="a PathQuestion-format folder (default ../shared/data/pathquestion-large)")
    p.add_argument("--memory-sets", nargs="+", default=[f"locomo={DATA / 'locomo' / 'locomo_dev3.json'}", f"beam={DATA / 'beam' / '500K'}",
                                                        "techchat=generate"],
                   help="NAME=PATH: locomo (LOCOMO-format file), beam (BEAM-format folder), techchat (a generated technical chat: PATH 'generate')")
    p.add_argument("--out", default=None, help="JSON results (default benchmarks/results/generalisation.json)")
    return p.parse_args(argv)


def log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def relation_cases(args: argparse.Namespace) -> dict[tuple[str, str], Any]:
    loaders = {"own": relation_sets.own, "personas": lambda: relation_sets.personas(args.personas),
               "pathquestion": lambda: relation_sets.pathquestion(args.pathquestion)}
    out = {}
    for name in args.relation_sets:
        graphs = loaders[name]()
        for e in args.embedders:
            model = locomo.onnx_model(e)
            embedder = common.CachedEmbedder(model, common.disk_cache_path(model, "relations"))
            out[(name, e)] = relation_pools(name, graphs, e, embedder)
            embedder.save()
    return out


def memory_sets(args: argparse.Namespace) -> dict[str, Path]:
    sets = {}
    for item in args.memory_sets:
        name, _, path = item.partition("=")
        if name == "techchat" and path == "generate":
            from benchmarks.retrieval import locomo_techchat

            target = Path(common.DISK_CACHE_DIR).parent / "graphmem-techchat-dev.json"
            if not target.is_file():
                locomo_techchat.main([str(target), "--seed", "7", "8", "9"])
            path = str(target)
        sets[name] = Path(path)
    return sets


def run_relations(args: argparse.Namespace) -> dict[str, Any]:
    cases = relation_cases(args)
    floors = {e: locomo.onnx_model(e).query_floor for e in args.embedders}
    measure = relation_fit.RelationMeasure(cases, floors)
    table = lodo.Table(measure, args.relation_sets, args.embedders)
    plain = relation_fit.SPACE.start()
    chosen = lodo.folds(table, relation_fit.SPACE, lambda d, e: max(table.figure(s, d, e) for s in relation_fit.SINGLES), log=log)
    rows = relation_fit.rows(measure, chosen, args.relation_sets, args.embedders)
    print("\nRelations (macro mean over slices: hit@5 of the answer; path recall@10 for multi-hop)")
    print(common.table(relation_fit.ROW_HEADERS, rows))
    slices = [[d, e, name, round(v, 3), round(measure.slices(plain, d, e).get(name, 0.0), 3), round(measure.slices(relation_fit.TODAY, d, e).get(name, 0.0), 3)]
              for d in args.relation_sets for e in args.embedders for name, v in measure.slices(chosen[d], d, e).items()]
    print(common.table(["left out", "embedder", "slice", "held-out", "fact vector", "today"], slices))
    sizes = {d: len(cases[(d, args.embedders[0])]) for d in args.relation_sets}
    out = _rules("relations", table, relation_fit.SPACE, chosen, relation_fit.describe, rows, sizes)
    shipped = tuple(out["shipped"].items())
    print(common.table(["dataset", "embedder", "shipped", "best fact vector", "shipped - best fact vector", "same top 10 as graphmem"],
                       [[d, e, round(measure(shipped, d, e), 3), round(measure.single(d, e), 3), round(measure(shipped, d, e) - measure.single(d, e), 3),
                         round(relation_fit.agreement_with_graphmem(measure, shipped, d, e), 3)] for d in args.relation_sets for e in args.embedders]))
    return out


def run_memories(args: argparse.Namespace) -> dict[str, Any]:
    sets = memory_sets(args)
    cases = {(name, e): memory_pools(name, path, e) for name, path in sets.items() for e in args.embedders}
    measure = memory_fit.MemoryMeasure(cases)
    table = lodo.Table(measure, list(sets), args.embedders)

    def floor(d: str, e: str) -> float:
        return max(table.figure(memory_fit.SPACE.start(), d, e), measure.of_preset(memory_fit.BM25_ONLY, d, e))

    chosen = lodo.folds(table, memory_fit.SPACE, floor, log=log, start=memory_fit.TODAY)  # from today's rules: each is re-checked
    rows = memory_fit.rows(measure, table, chosen, list(sets), args.embedders)
    print("\nMemories (recall@10)")
    print(common.table(["left out", "embedder", "today", "held-out", "vector", "bm25", "held-out - best single"], rows))
    sizes = {d: len(measure.cases[(d, args.embedders[0])]) for d in sets}
    out = _rules("memories", table, memory_fit.SPACE, chosen, memory_fit.describe, rows, sizes)
    shipped = tuple(out["shipped"].items())
    print(common.table(["dataset", "embedder", "shipped", "best single", "shipped - best single"],
                       [[d, e, round(table.figure(shipped, d, e), 3), round(floor(d, e), 3), round(table.figure(shipped, d, e) - floor(d, e), 3)]
                        for d in sets for e in args.embedders]))
    return out


def _rules(half: str, table: lodo.Table, space: lodo.Space, chosen: dict[str, lodo.Setting], describe: Any, rows: list[list[Any]],
           sizes: dict[str, int]) -> dict[str, Any]:
    for fold, setting in chosen.items():
        print(f"  {half} chosen without {fold}: {describe(setting)}" if fold != "all" else f"  {half} chosen on all: {describe(setting)}")
    report = lodo.rule_report(table, space, chosen)
    if report:
        print(common.table(["rule (all-data value)", *[f"held-out effect, {d}" for d in table.datasets]],
                           [[f"{name}={dict(chosen['all'])[name]}", *[round(v, 3) for v in effects.values()]] for name, effects in report.items()]))
    shipped = lodo.pruned(table, space, chosen, sizes, log=log)
    print(f"  {half} shipped (the rules that pay held out): {describe(shipped)}")
    return {"rows": rows, "chosen": {k: dict(v) for k, v in chosen.items()}, "rules": report, "shipped": dict(shipped)}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    started = time.perf_counter()
    results: dict[str, Any] = {}
    if "relations" in args.half:
        results["relations"] = run_relations(args)
    if "memories" in args.half:
        results["memories"] = run_memories(args)
    payload = {"args": {k: str(v) for k, v in vars(args).items()}, **results, "commit": common.git_commit(), "machine": common.machine_info()}
    path = common.write_result("generalisation", json.loads(json.dumps(payload, default=str)), args.out)
    log(f"results: {path} ({time.perf_counter() - started:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
