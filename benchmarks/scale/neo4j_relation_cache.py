"""Neo4j's relation-search cache (stores/neo4j/cached_search.py): does it rank as search_graph.cypher
does, and how fast is the relation half of search with it, beside the embedded store, in one run?

The graph_retrieval graphs (``--split``) and its latency user (~1,000 relations around the user)
are loaded into the embedded store and into Neo4j (one load; a second Neo4jStore on the same
server runs without the cache, as before). Rankings: every question's top 10 of the relation half
(retrieval.graph.search_relations, with the question's as_of and hops) with and without the cache:
ids in order and fused scores; and the store's whole candidate pool (search_graph): ids in order
and the three scores. Latency: the relation half on the latency user, the three systems
interleaved in the same rounds (query embeddings made beforehand), p50 / p95 ms and the ratio of
Neo4j's p95 to the embedded store's; plus the cold load of the latency user's scope and what the
cache holds for it; and an agent's turns: an add to that scope, then its searches.

    python -m benchmarks.scale.neo4j_relation_cache --neo4j-url bolt://127.0.0.1:7781 --embedder minilm bge
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.data.graph_data import UserGraph, generate, latency_user
from benchmarks.retrieval import graph_retrieval as gr
from graphmem import Memory
from graphmem.retrieval import get_preset
from graphmem.retrieval.graph import graph_query, search_relations
from graphmem.retrieval.hubness import query_vectors
from graphmem.retrieval.scale import on_scale
from graphmem.stores.embedded import EmbeddedStore
from graphmem.stores.neo4j import Neo4jStore
from graphmem.testing import ScriptedLLMServer
from graphmem.types import EntityWrite, GraphWrite, RelationWrite, Scope, canonical_name, new_id, utcnow

TOP = 10


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.scale.neo4j_relation_cache", description=__doc__.split("\n\n")[0])
    p.add_argument("--neo4j-url", required=True)
    p.add_argument("--embedder", nargs="+", default=["minilm"], choices=list(gr.MODELS))
    p.add_argument("--users", type=int, default=6)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--split", default="dev", choices=["dev", "heldout"])
    p.add_argument("--latency-relations", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=3, help="timed rounds of the latency questions (after one warm-up round)")
    p.add_argument("--write-rounds", type=int, default=10, help="adds to the latency user, each followed by its searches")
    p.add_argument("--label", default=None)
    p.add_argument("--out", default=None)
    return p.parse_args(argv)


def top(store: Any, scope: Scope, text: str, vector: list[float], q: Any, preset: Any, centre: Any) -> list[tuple[str, float]]:
    found = search_relations(store, scope, text, vector, preset, TOP, as_of=getattr(q, "as_of", None), hops=getattr(q, "hops", 1),
                             centre=centre)
    return [(r.id, float(r.score or 0.0)) for r in found]


def pool(store: Any, scope: Scope, text: str, vector: list[float], q: Any, preset: Any, centre: Any) -> list[tuple[str, list[float]]]:
    """The store's candidates (search_graph) in its order, with their three scores."""
    found = store.search_graph(scope, graph_query(scope, text, vector, preset, getattr(q, "as_of", None), hops=getattr(q, "hops", 1),
                                                  centre=centre))
    return [(r.id, [r.scores["vector"], r.scores["seed"], r.scores["fulltext"]]) for r in found]


def compare(cached: Neo4jStore, plain: Neo4jStore, graphs: list[UserGraph], embedder: Any, preset: Any, centre: Any) -> dict[str, Any]:
    """Every question's top 10 and the store's whole candidate pool, with and without the cache."""
    same, same_pool, differ, worst, worst_pool, asked, one_hop = 0, 0, [], 0.0, 0.0, 0, 0
    for g in graphs:
        scope = Scope.of(user_id=g.user_id)
        for q in g.questions:
            vector = embedder.embed_query(q.text)
            a, b = top(cached, scope, q.text, vector, q, preset, centre), top(plain, scope, q.text, vector, q, preset, centre)
            asked, one_hop = asked + 1, one_hop + (getattr(q, "hops", 1) == 1)
            if [i for i, _ in a] == [i for i, _ in b]:
                same += 1
                worst = max([worst, *(abs(x - y) for (_, x), (_, y) in zip(a, b, strict=True))])
            else:
                differ.append({"q": q.text, "cached": [i for i, _ in a], "statement": [i for i, _ in b]})
            pa, pb = pool(cached, scope, q.text, vector, q, preset, centre), pool(plain, scope, q.text, vector, q, preset, centre)
            if [i for i, _ in pa] == [i for i, _ in pb]:
                same_pool += 1
                worst_pool = max([worst_pool, *(abs(x - y) for (_, xs), (_, ys) in zip(pa, pb, strict=True) for x, y in zip(xs, ys, strict=True))])
            else:
                differ.append({"q": q.text, "pool": True, "cached": [i for i, _ in pa], "statement": [i for i, _ in pb]})
    return {"questions": asked, "one_hop": one_hop, "same_top10": same, "max_score_diff": worst, "same_pool": same_pool,
            "max_pool_score_diff": worst_pool, "differ": differ[:5]}


def latency(stores: dict[str, Any], g: UserGraph, embedder: Any, preset: Any, centre: Any, rounds: int) -> dict[str, Any]:
    scope = Scope.of(user_id=g.user_id)
    asked = [(q.text, embedder.embed_query(q.text)) for q in g.questions]
    times: dict[str, list[float]] = {name: [] for name in stores}
    for round_ in range(rounds + 1):
        for text, vector in asked:
            for name, store in stores.items():
                started = time.perf_counter()
                search_relations(store, scope, text, vector, preset, TOP, centre=centre)
                if round_:  # the first round warms caches (and loads the scope)
                    times[name].append((time.perf_counter() - started) * 1000)
    out: dict[str, Any] = {name: common.percentiles(t) for name, t in times.items()}
    base = out["embedded"]["p95"]
    for name in stores:
        out[name]["p95_over_embedded"] = round(out[name]["p95"] / base, 2) if base else None
    return out


def after_writes(cached: Neo4jStore, plain: Neo4jStore, g: UserGraph, embedder: Any, preset: Any, centre: Any, rounds: int) -> dict[str, Any]:
    """An agent's turn: one add to the latency user's scope (a new entity and its relation to the
    user), then its search, twice (the second meets the same version), per store; ms per search."""
    scope = Scope.of(user_id=g.user_id)
    (me,) = [e for e in cached.entities(scope) if e.canonical == canonical_name(g.user_id)]
    same = EntityWrite(me.id, me.name, me.canonical, me.entity_type, me.embedding or embedder.embed([me.name])[0], False)
    q = g.questions[0]
    vector = embedder.embed_query(q.text)
    times: dict[str, list[float]] = {"neo4j cached, 1st search": [], "neo4j cached, 2nd search": [], "neo4j statement": []}
    for i in range(rounds):
        new = EntityWrite(new_id(), f"thing {i}", canonical_name(f"thing {i}"), "object", embedder.embed([f"thing {i}"])[0], True)
        cached.write(GraphWrite(new_id(), scope, utcnow(), [same, new], [RelationWrite(me.id, "LIKES", new.id, utcnow())]))
        for name, store in (("neo4j cached, 1st search", cached), ("neo4j cached, 2nd search", cached), ("neo4j statement", plain)):
            started = time.perf_counter()
            search_relations(store, scope, q.text, vector, preset, TOP, centre=centre)
            times[name].append((time.perf_counter() - started) * 1000)
    return {name: common.percentiles(t) for name, t in times.items()}


def cold_load(store: Neo4jStore, g: UserGraph, embedder: Any, preset: Any, centre: Any) -> dict[str, Any]:
    """The latency user's first search on an empty cache, and what the cache then holds."""
    assert store.relation_cache is not None
    store.relation_cache._entries.clear()
    q = g.questions[0]
    started = time.perf_counter()
    search_relations(store, Scope.of(user_id=g.user_id), q.text, embedder.embed_query(q.text), preset, TOP, centre=centre)
    ms = (time.perf_counter() - started) * 1000
    for q in g.questions:  # every relation a question reads is materialised too
        search_relations(store, Scope.of(user_id=g.user_id), q.text, embedder.embed_query(q.text), preset, TOP, centre=centre)
    (entry,) = store.relation_cache._entries.values()
    return {"cold_search_ms": round(ms, 1), "relations": len(entry.rel_ids), "entities": len(entry.entity_ids),
            "materialised": len(entry.rows), "bytes": entry.nbytes,
            "bytes_per_1000_relations": round(entry.nbytes / max(1, len(entry.rel_ids)) * 1000)}


def run_model(model: str, args: argparse.Namespace, graphs: list[UserGraph], slow: UserGraph, tmp: Path) -> dict[str, Any]:
    from graphmem.embeddings import OnnxEmbedder

    embedder = common.CachedEmbedder(OnnxEmbedder(Path(gr._models_dir()) / gr.MODELS[model]))
    cached = Neo4jStore(url=args.neo4j_url, embedding_dims=embedder.dims)
    plain = Neo4jStore(url=args.neo4j_url, embedding_dims=embedder.dims, relation_cache_mb=0, warm_plans=False)
    embedded = EmbeddedStore(tmp / f"embedded-{model}", embedding_dims=embedder.dims)
    everyone = [*graphs, slow]
    with ScriptedLLMServer() as server:
        config = {"llm": {"provider": "openai_compatible", "config": {"base_url": server.base_url, "api_key": "none", "model": "none"}},
                  "context": {"summary_every": 0}}
        memories = [Memory({**config, "history_db_path": str(tmp / f"h-{model}-{i}.db")}, store=s, embedder=embedder)
                    for i, s in enumerate((cached, embedded))]
        try:
            for memory in memories:
                for g in everyone:
                    memory.delete_all(user_id=g.user_id)
                    gr.load(memory, g)
            preset, _ = on_scale(get_preset("hybrid"), None, embedder)
            centre = query_vectors(embedder, "warm up")[1]
            result = {"embedder": model, "rankings": compare(cached, plain, everyone, embedder, preset, centre),
                      "latency_ms": latency({"embedded": embedded, "neo4j cached": cached, "neo4j statement": plain}, slow, embedder,
                                            preset, centre, args.rounds),
                      "cache": cold_load(cached, slow, embedder, preset, centre),
                      "after_writes_ms": after_writes(cached, plain, slow, embedder, preset, centre, args.write_rounds)}
            for g in everyone:
                memories[0].delete_all(user_id=g.user_id)
            return result
        finally:
            for memory in memories:
                memory.close()
            plain.close()


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    graphs = generate(args.users, args.seed, args.split)
    slow = latency_user(args.seed, args.latency_relations)
    runs = []
    with tempfile.TemporaryDirectory(prefix="graphmem-relcache-") as tmp:
        for model in args.embedder:
            runs.append(run_model(model, args, graphs, slow, Path(tmp)))
            print(f"{model}: done", file=sys.stderr)
    for run in runs:
        r, c = run["rankings"], run["cache"]
        print(f"{run['embedder']}: top 10 identical {r['same_top10']}/{r['questions']} (max fused score diff {r['max_score_diff']:.2e}), "
              f"store pool identical {r['same_pool']}/{r['questions']} (max score diff {r['max_pool_score_diff']:.2e}; "
              f"{r['one_hop']} one-hop questions: the cached path); "
              f"cold search {c['cold_search_ms']} ms; cache {c['bytes'] / 2**20:.2f} MiB for {c['relations']} relations, "
              f"{c['entities']} entities ({c['bytes_per_1000_relations'] / 2**20:.2f} MiB per 1,000 relations)")
        for name, lat in run["latency_ms"].items():
            print(f"  {name:16} p50 {lat['p50']:7.1f}  p95 {lat['p95']:7.1f}  p95 / embedded {lat['p95_over_embedded']}")
        for name, lat in run["after_writes_ms"].items():
            print(f"  after an add: {name:26} p50 {lat['p50']:7.1f}  p95 {lat['p95']:7.1f}")
    payload = {"args": vars(args), "runs": runs, "commit": common.git_commit(), "machine": common.machine_info()}
    path = common.write_result(f"neo4j_relation_cache-{args.label or args.split}", payload, args.out)
    print(f"results: {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
