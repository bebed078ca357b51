"""Graph retrieval: does search find the relation that answers a question about the user's own graph?

Generated personal graphs (benchmarks.data.graph_data: a user hub of ~120 relations of ~30 kinds with
history, the people around the user with relations of their own) are written through graphmem's
load path (lifecycle.load.load_graph: the path an export takes into a store; no model call) and
asked through the public API (``Memory.search``, limit 10) with real ONNX embedders. Slices:
first-person paraphrases sharing no word with the answer (``paraphrase``), first-person questions
sharing one (``shared``), questions about the past with ``as_of`` (``as_of``), and two-hop
questions naming a person (``multihop``, ``hops=2``: the whole gold path in the top k). Metric:
hit@k (1, 5, 10) of the answering relation. Beside graphmem: a plain fact-vector baseline (cosine
between the question and each relation valid then, written as a sentence with its entity types).
Latency: the relation half of search (retrieval.graph.search_relations, query embedding made
beforehand) on one user whose own node holds ~1,000 relations.

    python -m benchmarks.retrieval.graph_retrieval --store embedded --embedder minilm
    python -m benchmarks.retrieval.graph_retrieval --store embedded neo4j --embedder minilm bge --split heldout
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks import common
from benchmarks.data.graph_data import UserGraph, generate, latency_user, sentence
from graphmem import Memory
from graphmem.lifecycle.load import load_graph
from graphmem.lifecycle.reindex import meaning_of
from graphmem.retrieval import SearchPreset, get_preset
from graphmem.retrieval.graph import graph_query, search_relations
from graphmem.retrieval.hubness import query_vectors
from graphmem.retrieval.scale import on_scale
from graphmem.schema.facts import relation_fact, stored_times
from graphmem.stores.base import RelationFact
from graphmem.testing import ScriptedLLMServer
from graphmem.types import Scope

MODELS = {"minilm": "all-MiniLM-L6-v2-onnx", "bge": "bge-small-en-v1.5-onnx"}
KS = (1, 5, 10)
SLICES = ("paraphrase", "shared", "as_of", "multihop")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.retrieval.graph_retrieval", description=__doc__.split("\n\n")[0])
    p.add_argument("--store", nargs="+", default=["embedded"], choices=["embedded", "neo4j"])
    p.add_argument("--embedder", nargs="+", default=["minilm"], choices=list(MODELS))
    p.add_argument("--users", type=int, default=6)
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--split", default="dev", choices=["dev", "heldout"], help="which half of the hand-written phrasings is asked")
    p.add_argument("--preset", default="hybrid")
    p.add_argument("--relation-weights", type=json.loads, default=None, help='JSON, e.g. {"vector": 1, "seed": 1}: the preset\'s relation_weights')
    p.add_argument("--relation-spread", type=float, default=None, help="the preset's relation_spread")
    p.add_argument("--relation-pool", type=int, default=None, help="the preset's relation_pool (relations read per seed)")
    p.add_argument("--relation-hubness", type=float, default=None, help="the preset's relation_hubness (0: the plain fact cosine)")
    p.add_argument("--slices", nargs="+", default=list(SLICES), choices=SLICES, help="ask only these slices")
    p.add_argument("--latency-relations", type=int, default=1000, help="relations of the latency user's own node (0: no latency run)")
    p.add_argument("--latency-rounds", type=int, default=5, help="times each latency question is asked (after one warm-up round)")
    p.add_argument("--neo4j-url", default=None, help="use this Neo4j instead of starting a private one")
    p.add_argument("--bolt-port", type=int, default=7703)
    p.add_argument("--http-port", type=int, default=7403)
    p.add_argument("--models-dir", default=str(_models_dir()), help="the folder holding the ONNX model folders")
    p.add_argument("--label", default=None, help="a name for this run in the results file")
    p.add_argument("--out", default=None)
    p.add_argument("--misses", type=int, default=0, help="print this many missed questions per slice")
    return p.parse_args(argv)


def _models_dir() -> Path:
    """../shared/models of the checkout (of the main checkout for a worktree under ../wt/NAME)."""
    near = [up / "shared" / "models" for up in (common.REPO_ROOT.parent, common.REPO_ROOT.parent.parent)]
    return next((p for p in near if p.is_dir()), near[0])


def ranks(found: list[str], gold: list[str]) -> int | None:
    """The 1-based position by which every gold relation has appeared (None: not all in the list)."""
    where = [found.index(g) + 1 for g in gold if g in found]
    return max(where) if len(where) == len(gold) else None


def summarise(positions: dict[str, list[int | None]]) -> dict[str, dict[str, Any]]:
    out = {}
    for name in SLICES:
        got = positions.get(name, [])
        if got:
            out[name] = {"n": len(got), **{f"hit@{k}": round(sum(1 for r in got if r is not None and r <= k) / len(got), 3) for k in KS}}
    return out


def baseline(graphs: list[UserGraph], embedder: common.CachedEmbedder) -> dict[str, list[int | None]]:
    """Cosine between the question (embedded as a search query, as graphmem does) and each relation
    valid at its as_of, written as a sentence with its types."""
    positions: dict[str, list[int | None]] = defaultdict(list)
    for g in graphs:
        types = {e.id: e.entity_type for e in g.entities.values()}
        for q in g.questions:
            rels = g.visible(q.as_of)
            vectors = np.array(embedder.embed([sentence(r, types) for r in rels]))
            cos = vectors @ np.array(embedder.embed_query(q.text))  # as search embeds a question (the model's query instruction)
            order = [rels[i].id for i in np.argsort(-cos, kind="stable")[: max(KS)]]
            positions[q.slice].append(ranks(order, q.gold))
    return positions


def open_store(kind: str, args: argparse.Namespace, dims: int, workdir: Path) -> tuple[Any, Any]:
    if kind == "embedded":
        from graphmem.stores.embedded import EmbeddedStore

        return EmbeddedStore(workdir / "embedded", embedding_dims=dims), None
    from graphmem.stores.neo4j import Neo4jStore

    private = None if args.neo4j_url else common.PrivateNeo4j(args.bolt_port, args.http_port, heap="1g")
    return Neo4jStore(url=args.neo4j_url or private.uri, embedding_dims=dims), private


def run_store(kind: str, args: argparse.Namespace, graphs: list[UserGraph], slow: UserGraph | None,
              embedder: common.CachedEmbedder, workdir: Path) -> dict[str, Any]:
    store, private = open_store(kind, args, embedder.dims, workdir)
    positions: dict[str, list[int | None]] = defaultdict(list)
    misses: dict[str, list[dict[str, Any]]] = defaultdict(list)
    everyone = [*graphs, *([slow] if slow else [])]
    with ScriptedLLMServer() as server:
        config = {"llm": {"provider": "openai_compatible", "config": {"base_url": server.base_url, "api_key": "none", "model": "none"}},
                  "history_db_path": str(workdir / f"history-{kind}-{embedder.name.replace(':', '_')}.db"),
                  "context": {"summary_every": 0}}
        memory = Memory(config, store=store, embedder=embedder)
        try:
            for g in everyone:
                memory.delete_all(user_id=g.user_id)
            started = time.perf_counter()
            for g in graphs:
                load(memory, g)
            load_seconds = time.perf_counter() - started
            for g in graphs:
                rels = {r.id: r for r in g.relations}
                for q in g.questions:
                    found = [r["id"] for r in memory.search(q.text, user_id=g.user_id, limit=max(KS), as_of=q.as_of, hops=q.hops,
                                                           preset=args.preset)["relations"]]
                    rank = ranks(found, q.gold)
                    positions[q.slice].append(rank)
                    if (rank is None or rank > 5) and len(misses[q.slice]) < args.misses:
                        misses[q.slice].append({"q": q.text, "gold": [_show(rels[i]) for i in q.gold],
                                                "top3": [_show(rels[i]) for i in found[:3] if i in rels], "rank": rank})
            latency = measure_latency(memory, slow, args) if slow else None
            assert not server.requests, "the graph retrieval benchmark must not call the LLM"
            for g in everyone:
                memory.delete_all(user_id=g.user_id)
        finally:
            memory.close()
            if private is not None:
                private.stop()
    return {"store": kind, "load_seconds": round(load_seconds, 2), "slices": summarise(positions), "latency_ms": latency,
            "misses": dict(misses)}


def load(memory: Memory, g: UserGraph) -> None:
    """The graph through graphmem's load path, then each relation version's fact as ``graphmem
    reindex`` writes it for data without one (schema.facts.relation_fact, one embedding batch,
    store.set_relation_facts) when the load left it without."""
    load_graph(memory, g.scope_graph())
    scope = Scope.of(user_id=g.user_id)
    if all(r.fact for r in memory.store.get_all(scope, include_invalidated=True, limit=None)):
        return
    facts = [relation_fact(r.source, r.source_type, r.relationship, r.destination, r.destination_type,
                           **dict(zip(("valid_at", "invalid_at"), stored_times(r.valid_at, r.invalid_at, r.created_at, r.expired_at),
                                      strict=True)), self_name=g.user_id)
             for r in g.relations]
    vectors = memory.embedder.embed([meaning_of(r, g.user_id) for r in g.relations])  # what an add embeds (schema.facts.fact_meaning)
    memory.store.set_relation_facts(scope, [RelationFact(r.id, r.source_id, f, v) for r, f, v in zip(g.relations, facts, vectors, strict=True)])


def _show(r: Any) -> str:
    return f"{r.source} {r.relationship} {r.destination} ({r.destination_type})"


def measure_latency(memory: Memory, g: UserGraph, args: argparse.Namespace) -> dict[str, Any]:
    """The relation half of search on the user with ~1,000 relations of their own; beside it, in
    the same rounds, the store's search_graph alone (the ranking's share is the difference)."""
    load(memory, g)
    scope = Scope.of(user_id=g.user_id)
    preset, _ = on_scale(args.preset, None, memory.embedder)  # as Memory.search scales it
    centre = query_vectors(memory.embedder, "warm up")[1]
    asked = [(q.text, memory.embedder.embed_query(q.text)) for q in g.questions]
    times: list[float] = []
    store_times: list[float] = []
    for round_ in range(args.latency_rounds + 1):
        for text, vector in asked:
            started = time.perf_counter()
            search_relations(memory.store, scope, text, vector, preset, max(KS), centre=centre)
            middle = time.perf_counter()
            memory.store.search_graph(scope, graph_query(scope, text, vector, preset, centre=centre))
            if round_:  # the first round warms caches
                times.append((middle - started) * 1000)
                store_times.append((time.perf_counter() - middle) * 1000)
    own = sum(1 for r in g.relations if r.source == g.user_id)
    return {"user_relations": own, "queries": len(times), **common.percentiles(times),
            "store": common.percentiles(store_times)}


def preset_of(args: argparse.Namespace) -> SearchPreset:
    preset = get_preset(args.preset)
    if args.relation_weights is not None:
        preset = replace(preset, relation_weights=args.relation_weights)
    if args.relation_spread is not None:
        preset = replace(preset, relation_spread=args.relation_spread)
    if args.relation_pool is not None:
        preset = replace(preset, relation_pool=args.relation_pool)
    if args.relation_hubness is not None:
        preset = replace(preset, relation_hubness=args.relation_hubness)
    return preset


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.preset = preset_of(args)
    graphs = generate(args.users, args.seed, args.split)
    for g in graphs:
        g.questions = [q for q in g.questions if q.slice in args.slices]
    slow = latency_user(args.seed, args.latency_relations) if args.latency_relations else None
    runs: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="graphmem-graphret-") as tmp:
        for model in args.embedder:
            from graphmem.embeddings import OnnxEmbedder

            embedder = common.CachedEmbedder(OnnxEmbedder(Path(args.models_dir) / MODELS[model]))
            texts = [q.text for g in graphs for q in g.questions] + [e.name for g in graphs for e in g.entities.values()]
            texts += [sentence(r, {e.id: e.entity_type for e in g.entities.values()}) for g in graphs for r in g.relations]
            embedder.prefetch(texts)
            started = time.perf_counter()
            runs.append({"embedder": model, "system": "fact-vector baseline", "slices": summarise(baseline(graphs, embedder))})
            print(f"{model}: baseline in {time.perf_counter() - started:.1f} s", file=sys.stderr)
            for kind in args.store:
                started = time.perf_counter()
                result = run_store(kind, args, graphs, slow, embedder, Path(tmp) / f"{model}-{kind}")
                runs.append({"embedder": model, "system": f"graphmem {kind}", **result})
                print(f"{model}: {kind} in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    counts = {s: sum(1 for g in graphs for q in g.questions if q.slice == s) for s in SLICES}
    print(report(runs, counts))
    for run in runs:
        for name, missed in (run.get("misses") or {}).items():
            for m in missed:
                print(f"  miss {run['embedder']} {run['system']} {name}: {m}")
    payload = {"args": {**vars(args), "preset": vars(args.preset)}, "questions": counts, "graphs": [len(g.relations) for g in graphs], "runs": runs,
               "commit": common.git_commit(), "machine": common.machine_info()}
    path = common.write_result(f"graph_retrieval-{args.label or args.split}", payload, args.out)
    print(f"results: {path}", file=sys.stderr)
    return 0


def report(runs: list[dict[str, Any]], counts: dict[str, int]) -> str:
    rows = []
    for run in runs:
        row: list[Any] = [run["embedder"], run["system"]]
        for name in SLICES:
            s = run["slices"].get(name, {})
            row += [s.get("hit@1"), s.get("hit@5"), s.get("hit@10")]
        lat = run.get("latency_ms") or {}
        rows.append(row + [lat.get("p50"), lat.get("p95"), (lat.get("store") or {}).get("p95")])
    headers = ["embedder", "system"] + [f"{n} @{k}" for n in SLICES for k in KS] + ["p50 ms", "p95 ms", "store p95 ms"]
    return f"questions: {counts}\n" + common.table(headers, rows)


if __name__ == "__main__":
    sys.exit(main())
