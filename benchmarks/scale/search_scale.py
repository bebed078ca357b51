"""Search at scale: graphmem's Neo4j search vs Mem0ᵍ's query pattern on the same data, same run.

Seeded synthetic users (light ones with --entities-per-user entities, one heavy user with
--heavy-entities) are loaded through graphmem's store API (GraphWrite) into a private Neo4j that
the project's launcher starts on its own port, and the same users as Mem0 stores them (:Mem0Entity,
no vector index, no uniqueness). Each query searches one user: graphmem's search_graph (and
search_memories when the store has it) with the query embedding, Mem0's pattern once per entity
the question names (--entities-per-query). Database time is the server's own (result summary:
available_after + consumed_after, 1 ms resolution), wall time is measured in the client. The same
generator also times the embedded store (in-process, wall time only).

    python -m benchmarks.scale.search_scale --users 1000        # a quick validation
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.data.scale_data import Spec, queries
from benchmarks.scale import scale_ops as ops


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.scale.search_scale", description=__doc__.split("\n\n")[0])
    p.add_argument("--users", type=int, default=10_000, help="light users")
    p.add_argument("--entities-per-user", type=int, default=100)
    p.add_argument("--heavy-entities", type=int, default=10_000, help="entities of the one heavy user")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--queries", type=int, default=200, help="measured queries per user class")
    p.add_argument("--warmup", type=int, default=30, help="unmeasured queries per user class first")
    p.add_argument("--entities-per-query", type=int, default=2, help="entities Mem0's LLM extracts from a question")
    p.add_argument("--stores", nargs="+", default=["neo4j", "embedded"], choices=["neo4j", "embedded"])
    p.add_argument("--embedded-users", type=int, default=1000, help="light users loaded into the embedded store")
    p.add_argument("--neo4j-url", default=None, help="use this (empty) Neo4j instead of starting a private one")
    p.add_argument("--bolt-port", type=int, default=7688)
    p.add_argument("--http-port", type=int, default=7475)
    p.add_argument("--data-dir", default=None, help="private Neo4j's data folder; reused when it holds this spec")
    p.add_argument("--keep-running", action="store_true", help="leave the private Neo4j running (the data stays either way)")
    p.add_argument("--heap", default="3g")
    p.add_argument("--pagecache", default="6g")
    p.add_argument("--extrapolate-to", type=int, default=1_000_000,
                   help="also time the vector index at the k graphmem would use with this many entities")
    p.add_argument("--batch-entities", type=int, default=5000, help="entities per load transaction (whole users)")
    p.add_argument("--load-workers", type=int, default=1, help="load transactions in flight at once (different users)")
    p.add_argument("--profile-top", type=int, default=15, help="cProfile Memory.search: report this many functions (0: off)")
    p.add_argument("--no-mem0", action="store_true", help="do not load or time the Mem0 pattern (graphmem only)")
    p.add_argument("--out", default=None)
    return p.parse_args(argv)



def run_neo4j(args: argparse.Namespace, spec: Spec) -> dict[str, Any]:
    from graphmem.stores.neo4j import Neo4jStore

    launcher = None
    if args.neo4j_url:
        url = args.neo4j_url
    else:
        data_dir = args.data_dir or str(Path(tempfile.gettempdir()) / f"graphmem-scale-{args.bolt_port}")
        launcher = common.PrivateNeo4j(args.bolt_port, args.http_port, data_dir, args.heap, args.pagecache)
        url = launcher.uri
    import neo4j

    raw = neo4j.GraphDatabase.driver(url, auth=None, notifications_min_severity="OFF")
    timer = ops.TimedDriver(raw)
    store = Neo4jStore(url=url, embedding_dims=spec.dims, driver=timer)  # type: ignore[arg-type]
    try:
        store.setup()
        users = spec.user_ids()
        loaded: dict[str, Any] = {"reused": ops.spec_marker(raw, spec)}
        if not loaded["reused"]:
            print(f"loading {spec.entity_count():,} entities for {len(users):,} users into {url}", file=sys.stderr)
            seconds = ops.load_graphmem(store, spec, users, ops.has_memories(store), args.batch_entities, args.load_workers)
            loaded["graphmem_seconds"] = round(seconds, 1)
            loaded["graphmem_entities_per_second"] = round(spec.entity_count() / max(seconds, 1e-9))
            if not args.no_mem0:
                loaded["mem0_seconds"] = round(ops.load_mem0(raw, spec, users), 1)
            raw.execute_query("CALL db.awaitIndexes(3600)")
            ops.spec_marker(raw, spec, write=True)
        loaded["partitioned"] = partition_large_scopes(store, spec)
        records, _, _ = raw.execute_query(
            "CALL () { MATCH (n:Entity) RETURN count(n) AS entities } "
            "CALL () { MATCH (n:Mem0Entity) RETURN count(n) AS mem0 } "
            "CALL () { MATCH (m:Memory) RETURN count(m) AS memories } RETURN entities, mem0, memories")
        loaded.update(dict(records[0]))
        results: dict[str, Any] = {"url": url, "server": common.neo4j_server_version(url), "data": loaded, "classes": {}}
        for cls, qs in ops.workload(spec, spec.users, args.queries + args.warmup, args.entities_per_query).items():
            print(f"timing {cls} users ({len(qs)} queries, {args.warmup} of them warm-up)", file=sys.stderr)
            results["classes"][cls] = {"graphmem": ops.time_graphmem(store, timer, qs, args.warmup)}
            results["classes"][cls]["graphmem"]["memory_search"] = ops.time_memory_search(store, timer, qs, args.warmup, args.profile_top)
            if not args.no_mem0:
                results["classes"][cls]["mem0"] = ops.time_mem0(raw, qs, args.warmup)
        if "heavy" in results["classes"] and args.extrapolate_to > loaded["entities"]:
            results["extrapolation"] = extrapolate(args, spec, raw, store, loaded["entities"])
        return results
    finally:
        store.close()
        raw.close()
        if launcher is not None and not args.keep_running:
            launcher.stop()


def partition_large_scopes(store: Any, spec: Spec) -> list[str]:
    """Scopes past the store's partition size get their own vector index: the write that crosses the
    size does it itself; calling it again is idempotent and covers a database loaded by an older
    graphmem. Returns the partitioned users (none when the store has no partitions)."""
    size = getattr(store.vector_plan, "partition_size", None)
    if size is None or not hasattr(store, "partition_scope") or spec.heavy_entities <= size:
        return []
    store.partition_scope(ops.q_scope(queries(spec, ["heavy-0"], 1, 1, salt=2)[0]))
    return ["heavy-0"]


def extrapolate(args: argparse.Namespace, spec: Spec, raw: Any, store: Any, entities: int) -> dict[str, Any]:
    """The heavy user's search at --extrapolate-to entities: the large-scope plan asks the global vector
    index for k = top_k x total / scope size neighbours; time the index at today's k and at that k."""
    top_k, cap = 10, store.vector_plan.max_k
    k_now = min(cap, -(-top_k * entities // spec.heavy_entities))
    k_target = min(cap, -(-top_k * args.extrapolate_to // spec.heavy_entities))
    qs = queries(spec, ["heavy-0"], args.queries + args.warmup, 1, salt=2)
    index = ops.time_vector_index(raw, qs, [k_now, k_target], args.warmup)
    return {"entities_now": entities, "entities_target": args.extrapolate_to, "k_now": k_now, "k_target": k_target,
            "global_vector_index_db_ms": index}


def run_embedded(args: argparse.Namespace, spec: Spec) -> dict[str, Any]:
    from graphmem.stores.embedded import EmbeddedStore

    small = Spec(spec.seed, min(args.embedded_users, spec.users), spec.entities_per_user, spec.heavy_entities,
                 spec.relations_per_entity, spec.memories_per_entity, spec.dims)
    with tempfile.TemporaryDirectory(prefix="graphmem-scale-embedded-") as tmp:
        store = EmbeddedStore(Path(tmp) / "store", embedding_dims=spec.dims, compact_every=10**9)
        try:
            print(f"loading {small.entity_count():,} entities into the embedded store", file=sys.stderr)
            seconds = ops.load_graphmem(store, small, small.user_ids(), True)
            results: dict[str, Any] = {"data": {"entities": small.entity_count(), "users": len(small.user_ids()),
                                                "load_seconds": round(seconds, 1)}, "classes": {}}
            for cls, qs in ops.workload(small, small.users, args.queries + args.warmup, args.entities_per_query).items():
                results["classes"][cls] = {"graphmem": ops.time_graphmem(store, None, qs, args.warmup)}
            return results
        finally:
            store.close()


def print_tables(results: dict[str, Any]) -> None:
    neo = results.get("neo4j")
    if neo:
        d = neo["data"]
        print(f"\nNeo4j {neo['server']}: {d['entities']:,} graphmem entities, {d['mem0']:,} Mem0 entities, {d['memories']:,} memories")
        rows = []
        for cls, res in neo["classes"].items():
            for engine, name in (("graphmem", "search_graph"), ("graphmem", "search_memories"), ("mem0", None)):
                r = res.get(engine) if name is None else res[engine].get(name)
                if r:
                    label = f"mem0 pattern ({r['round_trips']} queries)" if name is None else f"graphmem {name}"
                    rows.append([cls, label, *r["db_ms"].values(), *r["wall_ms"].values(), r["mean_results"]])
            if "memory_search" in res["graphmem"]:
                r = res["graphmem"]["memory_search"]
                rows.append([cls, "graphmem Memory.search (hashing)", *r["db_ms"].values(), *r["wall_ms"].values(), r["mean_results"]])
                if r.get("db_path_ms"):  # its two reads run in parallel: the database time on its critical path
                    rows.append([cls, "  Memory.search db, longest thread", *r["db_path_ms"].values(), "", "", "", ""])
            if "mem0" not in res:
                continue
            g, m = res["graphmem"]["search_graph"]["db_ms"], res["mem0"]["db_ms"]
            rows.append([cls, "ratio mem0 / graphmem search_graph", *(ratio(m[p], g[p]) for p in g), "", "", "", ""])
        print(common.table(["users", "search", "db p50", "db p95", "db p99", "wall p50", "wall p95", "wall p99", "rows"], rows))
        print_split(neo)
        ex = neo.get("extrapolation")
        if ex:
            now, target = ex["global_vector_index_db_ms"][str(ex["k_now"])], ex["global_vector_index_db_ms"][str(ex["k_target"])]
            heavy = neo["classes"]["heavy"]["graphmem"]["search_graph"]["db_ms"]
            partitioned = bool(neo["data"].get("partitioned"))
            # a partitioned scope asks its own index for top_k: nothing in its plan grows with the database
            est = {p: heavy[p] if partitioned else round(heavy[p] + target[p] - now[p], 1)
                   for p in heavy if None not in (heavy[p], target[p], now[p])}
            ex["heavy_search_graph_db_ms_estimate"] = est
            print(f"\nextrapolation to {ex['entities_target']:,} entities: global vector index k {ex['k_now']} -> {ex['k_target']}: "
                  f"p95 {now['p95']} -> {target['p95']} ms (used only by unpartitioned large scopes); heavy scope "
                  f"{'partitioned' if partitioned else 'not partitioned'}: search_graph db estimate {est}")
    emb = results.get("embedded")
    if emb:
        print(f"\nembedded store: {emb['data']['entities']:,} entities, {emb['data']['users']:,} users (wall ms)")
        rows = [[cls, name, *r["wall_ms"].values(), r["mean_results"]]
                for cls, res in emb["classes"].items() for name, r in res["graphmem"].items()]
        print(common.table(["users", "search", "p50", "p95", "p99", "rows"], rows))


def print_split(neo: dict[str, Any]) -> None:
    """Where Memory.search's wall time goes (means per search), and its cProfile's top functions."""
    classes = {cls: res["graphmem"]["memory_search"] for cls, res in neo["classes"].items() if "memory_search" in res["graphmem"]}
    splits = {cls: r["split_mean_ms"] for cls, r in classes.items() if r.get("split_mean_ms")}
    if not splits:
        return
    parts = list(next(iter(splits.values())))
    print("\nMemory.search wall time, mean ms per search")
    print(common.table(["users", *parts, "wall mean"],
                       [[cls, *split.values(), round(sum(split.values()), 2)] for cls, split in splits.items()]))
    for cls, r in classes.items():
        if r.get("profile_top"):
            print(f"\ncProfile of Memory.search, {cls} users (ms per search, most own time first)")
            print(common.table(["function", "own ms", "cumulative ms", "calls"],
                               [[p["function"], p["own_ms"], p["cumulative_ms"], p["calls_per_search"]] for p in r["profile_top"]]))


def ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return "–"
    return f"{a / max(b, 1.0):.1f}x" + ("" if b >= 1 else " (≥)")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    spec = Spec(args.seed, args.users, args.entities_per_user, args.heavy_entities)
    results: dict[str, Any] = {}
    started = time.perf_counter()
    if "neo4j" in args.stores:
        results["neo4j"] = run_neo4j(args, spec)
    if "embedded" in args.stores:
        results["embedded"] = run_embedded(args, spec)
    print_tables(results)
    server = (results.get("neo4j") or {}).get("server")
    params = {**{k: v for k, v in vars(args).items() if k != "out"}, "entities": spec.entity_count(),
              "relations_per_entity": spec.relations_per_entity, "memories_per_entity": spec.memories_per_entity,
              "dims": spec.dims, "mem0_threshold": ops.MEM0_THRESHOLD, "mem0_limit": ops.MEM0_LIMIT}
    path = common.write_result("search_scale", {"machine": common.machine_info(server), "versions": common.package_versions(),
                                                "parameters": params, "seconds": round(time.perf_counter() - started, 1),
                                                "results": results}, args.out)
    print(f"\nwritten {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
