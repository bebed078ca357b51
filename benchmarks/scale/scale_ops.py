"""Loading and timing for the search-at-scale benchmark: graphmem through its store API, Mem0ᵍ's
data and query pattern through raw Cypher (benchmarks/peers/cypher/), server time from result summaries."""

from __future__ import annotations

import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.data.scale_data import Query, Spec, generate_user, queries, writes
from graphmem.stores.base import GraphQuery, GraphStore, MemoryQuery
from graphmem.types import Scope

# mem0's statements live beside its peer benchmark (benchmarks/peers/cypher/).
CYPHER = Path(__file__).resolve().parent.parent / "peers" / "cypher"
MEM0_THRESHOLD, MEM0_LIMIT = 0.7, 100


class TimedDriver:
    """Delegates to a neo4j Driver and adds up the server time of every execute_query; ``calls``
    keeps each one's (thread, start, end, server ms), for searches whose reads run in parallel."""

    def __init__(self, driver: Any) -> None:
        self._driver = driver
        self.server_ms = 0.0
        self.driver_ms = 0.0  # wall time inside execute_query (server time included)
        self.calls: list[tuple[int, float, float, float]] = []
        self._lock = threading.Lock()

    def execute_query(self, *args: Any, **kwargs: Any) -> Any:
        started = time.perf_counter()
        records, summary, keys = self._driver.execute_query(*args, **kwargs)
        ended = time.perf_counter()
        server = (summary.result_available_after or 0) + (summary.result_consumed_after or 0)
        with self._lock:
            self.driver_ms += (ended - started) * 1000
            self.server_ms += server
            self.calls.append((threading.get_ident(), started, ended, server))
        return records, summary, keys

    def __getattr__(self, name: str) -> Any:
        return getattr(self._driver, name)


def has_memories(store: GraphStore) -> bool:
    return type(store).search_memories is not GraphStore.search_memories


class Progress:
    """Entities written, rate and ETA on stderr, at most every ``every`` seconds (and at the end)."""

    def __init__(self, label: str, total: int, every: float = 10.0) -> None:
        self.label, self.total, self.every = label, total, every
        self.started = self.last = time.perf_counter()
        self.shown = -1

    def __call__(self, done: int, users: int, final: bool = False) -> None:
        now = time.perf_counter()
        if done == self.shown or (not final and now - self.last < self.every):
            return
        self.last, self.shown = now, done
        rate = done / max(now - self.started, 1e-9)
        eta = (self.total - done) / rate if rate > 0 else float("inf")
        print(f"  {self.label}: {done:,}/{self.total:,} entities ({users:,} users) in {now - self.started:,.0f} s, "
              f"{rate:,.0f} entities/s, ETA {eta / 60:,.1f} min", file=sys.stderr, flush=True)


def progress(label: str, done: int, total: int, started: float) -> None:
    rate = done / max(time.perf_counter() - started, 1e-9)
    print(f"  {label}: {done:,}/{total:,} users, {rate:.1f} users/s", file=sys.stderr, flush=True)


def load_graphmem(store: GraphStore, spec: Spec, user_ids: list[str], memories: bool, batch_entities: int = 5000,
                  workers: int = 1) -> float:
    """Through the store's bulk path (write_many; on Neo4j a batch of new users is one create-only
    statement, bulk_graph.py): one transaction per batch of at least ``batch_entities`` entities,
    whole users each, so a user's relations never reach into an earlier batch. ``workers`` batches
    (of different users) are written at once."""
    from collections import deque
    from concurrent.futures import Future, ThreadPoolExecutor

    started, batch, size, done = time.perf_counter(), [], 0, 0
    report = Progress("graphmem", spec.entity_count())
    pending: deque[tuple[Future[None], int, int]] = deque()

    def finish_oldest() -> None:
        nonlocal done
        future, entities, users = pending.popleft()
        future.result()
        done += entities
        report(done, users)

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        for n, uid in enumerate(user_ids, start=1):
            for w in writes(generate_user(spec, uid), memories):
                w.idempotency_key = w.add_id
                batch.append(w)
                size += len(w.entities)
            if size >= batch_entities or n == len(user_ids):
                while len(pending) >= max(1, workers):
                    finish_oldest()
                pending.append((pool.submit(write_batch, store, batch), size, n))
                batch, size = [], 0
        while pending:
            finish_oldest()
    report(done, len(user_ids), final=True)
    return time.perf_counter() - started


def write_batch(store: GraphStore, batch: list[Any]) -> None:
    """write_many, resumable: batches whose keys are in the store are skipped (a re-run, or the
    driver retrying a transaction whose commit had in fact succeeded on a starved server)."""
    if not batch:
        return
    keys = [w.idempotency_key for w in batch]
    if len(store.imported_keys(keys)) == len(keys):
        return
    try:
        store.write_many(batch)
    except Exception:
        if len(store.imported_keys(keys)) != len(keys):
            raise
        print("  (a batch committed before a retried transaction failed; continuing)", file=sys.stderr)


def load_mem0(driver: Any, spec: Spec, user_ids: list[str], batch_entities: int = 2000) -> float:
    for stmt in (CYPHER / "mem0_schema.cypher").read_text().split(";"):
        body = "\n".join(line for line in stmt.splitlines() if not line.lstrip().startswith("//")).strip()
        if body:
            driver.execute_query(body)
    text = (CYPHER / "mem0_load.cypher").read_text()
    started, batch, size = time.perf_counter(), [], 0
    for n, uid in enumerate(user_ids, start=1):
        u = generate_user(spec, uid)
        batch.append({"user_id": uid, "names": u.names, "embeddings": u.vectors.tolist(),
                      "relations": [{"s": s, "type": t, "d": d} for s, t, d in u.relations]})
        size += len(u.names)
        if size >= batch_entities or n == len(user_ids):
            driver.execute_query(text, {"users": batch})
            batch, size = [], 0
        if n % 500 == 0 or n == len(user_ids):
            progress("mem0", n, len(user_ids), started)
    return time.perf_counter() - started


def spec_marker(driver: Any, spec: Spec, write: bool = False) -> bool:
    """A (:GraphmemBenchmark) node records which spec the database holds, so a rerun can skip loading."""
    key = json.dumps(spec.__dict__, sort_keys=True)
    if write:
        driver.execute_query("MERGE (b:GraphmemBenchmark {spec: $spec})", {"spec": key})
        return True
    records, _, _ = driver.execute_query("MATCH (b:GraphmemBenchmark {spec: $spec}) RETURN count(b) AS n", {"spec": key})
    return records[0]["n"] > 0


def time_graphmem(store: GraphStore, timer: TimedDriver | None, qs: list[Query], warmup: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    kinds = [("search_graph", lambda q: store.search_graph(q_scope(q), GraphQuery(q.vectors[0], q.text, [])))]
    if has_memories(store):
        kinds.append(("search_memories", lambda q: store.search_memories(q_scope(q), MemoryQuery(q.vectors[0], q.text, top_k=30))))
    for name, run in kinds:
        db, wall, rows, trips = [], [], [], []
        for i, q in enumerate(qs):
            before_ms, before_trips = (timer.server_ms if timer else 0.0), store.round_trips
            started = time.perf_counter()
            found = run(q)
            if i >= warmup:
                wall.append((time.perf_counter() - started) * 1000)
                db.append((timer.server_ms - before_ms) if timer else None)
                rows.append(len(found))
                trips.append(store.round_trips - before_trips)
        out[name] = {"db_ms": common.percentiles([d for d in db if d is not None]), "wall_ms": common.percentiles(wall),
                     "mean_results": round(sum(rows) / max(len(rows), 1), 1), "round_trips": max(trips, default=0)}
    return out


def time_mem0(driver: Any, qs: list[Query], warmup: int) -> dict[str, Any]:
    text = (CYPHER / "mem0_search.cypher").read_text()
    per_search_db, per_query_db, wall, rows = [], [], [], []
    for i, q in enumerate(qs):
        started, total_db, found = time.perf_counter(), 0.0, 0
        for vec in q.vectors:
            records, summary, _ = driver.execute_query(
                text, {"user_id": q.user_id, "n_embedding": vec, "threshold": MEM0_THRESHOLD, "limit": MEM0_LIMIT})
            db = (summary.result_available_after or 0) + (summary.result_consumed_after or 0)
            total_db += db
            found += len(records)
            if i >= warmup:
                per_query_db.append(db)
        if i >= warmup:
            wall.append((time.perf_counter() - started) * 1000)
            per_search_db.append(total_db)
            rows.append(found)
    return {"db_ms": common.percentiles(per_search_db), "db_ms_per_entity_query": common.percentiles(per_query_db),
            "wall_ms": common.percentiles(wall), "mean_results": round(sum(rows) / max(len(rows), 1), 1),
            "round_trips": len(qs[0].vectors) if qs else 0}


def q_scope(q: Query) -> Scope:
    return Scope.of(q.user_id)


def workload(spec: Spec, light_users: int, count: int, entities_per_query: int) -> dict[str, list[Query]]:
    light_ids = [f"light-{i}" for i in range(light_users)]
    out = {"light": queries(spec, light_ids, count, entities_per_query, salt=1)}
    if spec.heavy_entities:
        out["heavy"] = queries(spec, ["heavy-0"], count, entities_per_query, salt=2)
    return out


def time_vector_index(driver: Any, qs: list[Query], ks: list[int], warmup: int) -> dict[str, Any]:
    """Server time of the global entity vector index alone at each k: how graphmem's large-scope plan
    (k = top_k x total / scope size) grows when the database grows, used to extrapolate."""
    out = {}
    for k in ks:
        times = []
        for i, q in enumerate(qs):
            _, summary, _ = driver.execute_query(
                "CALL db.index.vector.queryNodes('entity_embedding', $k, $e) YIELD node RETURN count(node) AS n",
                {"k": k, "e": q.vectors[0]})
            if i >= warmup:
                times.append((summary.result_available_after or 0) + (summary.result_consumed_after or 0))
        out[str(k)] = common.percentiles(times)
    return out


STORE_READS = ("search_memories", "search_graph", "memory_context")


class SearchSplit:
    """Where a Memory.search's wall milliseconds go: the embedder, the store reads (split into the
    server's own time, the rest of the driver call: Bolt round trip, PackStream, record objects, and
    the store turning rows into typed results) and everything else (fusion, BM25 rerank, dicts).
    A search on Neo4j runs its memory and relation reads in parallel (GraphStore.concurrent_reads):
    the store and driver parts are the time covered by at least one call (overlaps counted once), and
    the server part is its longest thread (the database time on the search's critical path)."""

    def __init__(self, memory: Any, store: Any, timer: TimedDriver | None) -> None:
        self.timer, self.embed_ms = timer, 0.0
        self.store_calls: list[tuple[float, float]] = []
        embedder = memory.embedder
        embed_one = embedder.embed_one

        def embed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return embed_one(*args, **kwargs)
            finally:
                self.embed_ms += (time.perf_counter() - started) * 1000

        embedder.embed_one = embed
        for name in STORE_READS:
            if hasattr(store, name):
                setattr(store, name, self._timed(getattr(store, name)))

    def _timed(self, fn: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.store_calls.append((started, time.perf_counter()))
        return run

    def mark(self) -> tuple[float, int, int]:
        return self.embed_ms, len(self.store_calls), len(self.timer.calls) if self.timer else 0

    def parts(self, mark: tuple[float, int, int], wall: float) -> dict[str, float]:
        """The search since ``mark``: its wall time's parts (they add up to ``wall``)."""
        embed = self.embed_ms - mark[0]
        store = covered(self.store_calls[mark[1]:])
        calls = self.timer.calls[mark[2]:] if self.timer else []
        driver = covered([(a, b) for _, a, b, _ in calls])
        server = longest_thread(calls)
        return {"embedding": embed, "database (server), longest thread": server,
                "driver (Bolt, PackStream, records) beyond server": driver - server,
                "store: rows to typed results": store - driver, "Python: fusion, rerank, dicts": wall - embed - store}


def covered(intervals: list[tuple[float, float]]) -> float:
    """Milliseconds covered by at least one of the (start, end) intervals (seconds)."""
    total, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        a = max(a, end)
        if b > a:
            total, end = total + b - a, b
    return total * 1000


def longest_thread(calls: list[tuple[int, float, float, float]]) -> float:
    """The largest server time summed per thread: with reads in parallel, the database's part of the wall time."""
    per: dict[int, float] = {}
    for thread, _, _, server in calls:
        per[thread] = per.get(thread, 0.0) + server
    return max(per.values(), default=0.0)


def time_memory_search(store: GraphStore, timer: TimedDriver | None, qs: list[Query], warmup: int,
                       profile_top: int = 0) -> dict[str, Any]:
    """The full public search (Memory.search, limit 10): query embedding (hashing embedder, so no model
    is timed), memory and graph queries, fusion and result dicts. The LLM is never called on search.
    Also where the wall time goes (SearchSplit, means in ms), and with ``profile_top`` a cProfile of
    the measured queries run again (the functions with the most own time)."""
    import cProfile
    import tempfile

    from graphmem import Memory
    from graphmem.embeddings import HashingEmbedder

    with tempfile.TemporaryDirectory(prefix="graphmem-scale-history-") as tmp:
        config = {"llm": {"provider": "openai_compatible", "config": {"base_url": "http://127.0.0.1:9/v1", "api_key": "unused"}},
                  "history_db_path": f"{tmp}/history.db"}
        memory = Memory(config, store=store, embedder=HashingEmbedder(dims=len(qs[0].vectors[0])))
        split = SearchSplit(memory, store, timer)
        db, db_path, wall, rows, trips, parts = [], [], [], [], [], []
        for i, q in enumerate(qs):
            mark, before_trips = split.mark(), store.round_trips
            started = time.perf_counter()
            found = memory.search(q.text, user_id=q.user_id, limit=10)
            ms = (time.perf_counter() - started) * 1000
            if i >= warmup:
                wall.append(ms)
                if timer:
                    calls = timer.calls[mark[2]:]
                    db.append(sum(c[3] for c in calls))
                    db_path.append(longest_thread(calls))
                rows.append(len(found["results"]) + len(found["relations"]))
                trips.append(store.round_trips - before_trips)
                parts.append(split.parts(mark, ms))
        for name in STORE_READS:  # the timing wrappers were instance attributes
            store.__dict__.pop(name, None)
        profiler = cProfile.Profile() if profile_top else None
        if profiler:  # a second pass over the measured queries: the profiler's overhead stays out of the timings
            profiler.enable()
            for q in qs[warmup:]:
                memory.search(q.text, user_id=q.user_id, limit=10)
            profiler.disable()
    # db_ms: the server time of all its statements; db_path_ms: of its longest thread (reads in parallel)
    out = {"db_ms": common.percentiles(db), "db_path_ms": common.percentiles(db_path), "wall_ms": common.percentiles(wall),
           "mean_results": round(sum(rows) / max(len(rows), 1), 1), "round_trips": max(trips, default=0),
           "split_mean_ms": {k: round(sum(p[k] for p in parts) / max(len(parts), 1), 2) for k in (parts[0] if parts else {})}}
    if profiler:
        out["profile_top"] = top_functions(profiler, profile_top, len(parts))
    return out


def top_functions(profiler: Any, top: int, searches: int) -> list[dict[str, Any]]:
    """The functions with the most own time, in ms per search."""
    import pstats

    stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
    rows = sorted(((tt, ct, n, f) for f, (_, n, tt, ct, _) in stats.items()), reverse=True)[:top]
    return [{"function": f"{Path(f[0]).name}:{f[1]}({f[2]})", "own_ms": round(tt * 1000 / max(searches, 1), 3),
             "cumulative_ms": round(ct * 1000 / max(searches, 1), 3), "calls_per_search": round(n / max(searches, 1), 1)}
            for tt, ct, n, f in rows]
