"""Neo4j's search_graph.cypher on the graph_retrieval latency user (~1,000 relations around the
user): the statement alone, timed through the driver, and its PROFILE summary (db hits per
operator type), with parameter overrides to A/B one lever in the same session.

    python -m benchmarks.cost.search_graph_profile --neo4j-url bolt://127.0.0.1:7741
    python -m benchmarks.cost.search_graph_profile --neo4j-url bolt://127.0.0.1:7741 --override '{"scan_limit": 0}'

The latency user is loaded once (kept between runs; ``--drop`` removes it at the end).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.data.graph_data import latency_user
from benchmarks.retrieval import graph_retrieval as gr
from graphmem import Memory
from graphmem.retrieval import get_preset
from graphmem.retrieval.graph import graph_query
from graphmem.retrieval.hubness import query_vectors
from graphmem.retrieval.scale import on_scale
from graphmem.stores.neo4j import Neo4jStore, queries
from graphmem.testing import ScriptedLLMServer
from graphmem.types import Scope


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.cost.search_graph_profile", description=__doc__.split("\n\n")[0])
    p.add_argument("--neo4j-url", required=True)
    p.add_argument("--embedder", default="minilm", choices=list(gr.MODELS))
    p.add_argument("--rounds", type=int, default=3, help="timed rounds of every question (after one warm-up round)")
    p.add_argument("--override", type=json.loads, default={}, help="JSON: statement parameters to replace, e.g. {\"scan_limit\": 0}")
    p.add_argument("--drop", action="store_true", help="delete the latency user at the end")
    return p.parse_args(argv)


def walk(plan: dict[str, Any], hits: dict[str, int]) -> None:
    hits[plan["operatorType"].split("@")[0]] += int(plan.get("dbHits", 0))
    for child in plan.get("children", []):
        walk(child, hits)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    from graphmem.embeddings import OnnxEmbedder

    embedder = common.CachedEmbedder(OnnxEmbedder(Path(gr._models_dir()) / gr.MODELS[args.embedder]))
    store = Neo4jStore(url=args.neo4j_url, embedding_dims=embedder.dims)
    g = latency_user(7, 1000)
    scope = Scope.of(user_id=g.user_id)
    with ScriptedLLMServer() as server, tempfile.TemporaryDirectory() as tmp:
        memory = Memory({"llm": {"provider": "openai_compatible", "config": {"base_url": server.base_url, "api_key": "none", "model": "none"}},
                         "history_db_path": str(Path(tmp) / "history.db"), "context": {"summary_every": 0}}, store=store, embedder=embedder)
        try:
            if len(store.get_all(scope, limit=None)) < len([r for r in g.relations if r.invalid_at is None]):
                memory.delete_all(user_id=g.user_id)
                gr.load(memory, g)
            preset, _ = on_scale(get_preset("hybrid"), None, embedder)
            centre = query_vectors(embedder, "warm up")[1]
            statements = []
            for q in g.questions:
                stmt = queries.search_graph(scope, graph_query(scope, q.text, embedder.embed_query(q.text), preset, centre=centre),
                                            store.vector_plan, store.search_relation_limit)
                text, params = stmt.run_args()
                (params.get("p", params)).update(args.override)
                statements.append((text, params))
            times: list[float] = []
            for round_ in range(args.rounds + 1):
                for text, params in statements:
                    started = time.perf_counter()
                    store._driver.execute_query(text, params, database_=store.database)
                    if round_:
                        times.append((time.perf_counter() - started) * 1000)
            hits: dict[str, int] = defaultdict(int)
            for text, params in statements:
                _, summary, _ = store._driver.execute_query("PROFILE " + text, params, database_=store.database)
                walk(summary.profile, hits)
            print(json.dumps({"override": args.override, "statements": len(times), **common.percentiles(times)}))
            for name, n in sorted(hits.items(), key=lambda kv: -kv[1])[:10]:
                print(f"  {name:32} db hits per search {n / len(statements):10.0f}")
            if args.drop:
                memory.delete_all(user_id=g.user_id)
        finally:
            memory.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
