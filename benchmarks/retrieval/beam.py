"""BEAM retrieval: recall@k of graphmem's search presets on any folder in BEAM's format.

Per conversation one user scope; every message (user and assistant) is stored verbatim with
``add_many(infer=False)``, metadata = message id and role, timestamp = the batch's time anchor.
Every probing question with gold message ids is one ``search(limit=k)`` per k; R@k = |gold ∩ ids of
the top k| / |gold|, averaged per ability and over all questions (abstention has no gold by design).
knowledge_update also reports how often the updated statement is in the top 10 and ranked above the
original one. No LLM is called: the LLM endpoint is a local scripted server that must see zero requests.

Honest as benchmarks.retrieval.locomo: R@k from a search with ``limit=k``; latency is the wall time of the
limit=10 ``Memory.search`` call including the query embedding (questions are never cached). Only
documents are cached, on disk under the temp folder (common.disk_cache_path), so a second run with
the same model does not embed 10,000 messages again.

    python -m benchmarks.retrieval.beam ../shared/data/beam/500K --embedder minilm
    python -m benchmarks.retrieval.beam ../shared/data/beam/500K --embedder bge --stores embedded neo4j
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.data.beam_data import ABILITIES, Conversation, Question, load
from benchmarks.retrieval.locomo import (
    ABLATIONS,
    EMBEDDERS,
    LATENCY_K,
    DocumentsCached,
    load_embedder,
    open_store,
    preset_named,
    preset_settings,
)
from graphmem import Memory
from graphmem.testing import ScriptedLLMServer


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.retrieval.beam", description=__doc__.split("\n\n")[0])
    p.add_argument("folder", help="a BEAM-format folder: one conversation (chat.json, pq.json) or a parent of several")
    p.add_argument("--k", type=int, nargs="+", default=[5, 10], help="cut-offs for recall@k")
    p.add_argument("--stores", nargs="+", default=["embedded"], choices=["embedded", "neo4j"])
    p.add_argument("--presets", nargs="+", default=["vector", "bm25", "hybrid", "hybrid_rrf"],
                   help=f"graphmem presets, or ablations of hybrid: {', '.join(ABLATIONS)}")
    p.add_argument("--embedder", default="minilm", help=f"{' or '.join(EMBEDDERS)}, or an ONNX model folder")
    p.add_argument("--conversations", nargs="+", default=None, help="only these conversation folders (names)")
    p.add_argument("--no-disk-cache", action="store_true", help="embed the documents again (nothing read or written)")
    p.add_argument("--neo4j-url", default=None, help="use this Neo4j instead of starting a private one")
    p.add_argument("--bolt-port", type=int, default=7689, help="private Neo4j's bolt port (default 7689)")
    p.add_argument("--http-port", type=int, default=7476)
    p.add_argument("--data-dir", default=None, help="private Neo4j's data folder (default: a temp folder)")
    p.add_argument("--out", default=None, help="JSON output (default benchmarks/results/beam-<embedder>.json)")
    return p.parse_args(argv)


def ingest(memory: Memory, embedder: DocumentsCached, conv: Conversation, user_id: str) -> tuple[int, list[dict[str, Any]]]:
    """Import one conversation; returns the messages added and those graphmem refused for an input
    limit (a pasted file over the per-message limit: its gold questions count as misses, as they
    would for a user). Any other failure stops the run."""
    embedder.cache.prefetch([m.content for m in conv.messages])  # one pass over the model (or the disk cache)
    embedder.cache.save()
    items = [{"messages": [{"role": m.role, "content": m.content}], "user_id": user_id, "timestamp": m.when,
              "metadata": {"message_id": m.id, "role": m.role}} for m in conv.messages]
    result = memory.add_many(items, infer=False)
    refused = [{"conversation": conv.name, "message_id": conv.messages[f["index"]].id, "error": f["error"]}
               for f in result["failed"] if str(f["error"]).startswith("LimitExceededError")]
    if len(refused) != len(result["failed"]):
        raise SystemExit(f"{conv.name}: {len(result['failed'])} messages failed to import: {result['failed'][:3]}")
    for r in refused:
        print(f"{conv.name}: message {r['message_id']} refused ({r['error']}); questions on it count as misses", file=sys.stderr)
    return int(result["added"]), refused


def ranked_ids(memory: Memory, question: str, user_id: str, preset: str, limit: int) -> list[int]:
    results = memory.search(question, user_id=user_id, limit=limit, preset=preset_named(preset))["results"]
    return [int((r.get("metadata") or {})["message_id"]) for r in results]


def recall_at(ranked: list[int], gold: list[int], k: int) -> float:
    return len(set(ranked[:k]).intersection(gold)) / len(gold)


def update_order(ranked: list[int], q: Question) -> tuple[bool, bool]:
    """(updated statement in the top 10, updated ranked above the original)."""
    def first(ids: list[int]) -> float:
        return min((ranked.index(i) for i in ids if i in ranked[:10]), default=math.inf)

    updated, original = first(q.updated), first(q.original)
    return updated < math.inf, updated < original


def run_store(kind: str, args: argparse.Namespace, convs: list[Conversation], embedder: DocumentsCached,
              workdir: Path) -> dict[str, Any]:
    store, server_version, private = open_store(kind, args, embedder.dims, workdir)
    tag = uuid.uuid4().hex[:8]
    scores: dict[str, dict[int, dict[str, list[float]]]] = {p: defaultdict(lambda: defaultdict(list)) for p in args.presets}
    ordering: dict[str, list[tuple[bool, bool]]] = defaultdict(list)
    latency: dict[str, list[float]] = defaultdict(list)
    search_only: dict[str, list[float]] = defaultdict(list)  # latency less the query embedding
    ingest_seconds, documents, refused = 0.0, 0, []
    latency_k = LATENCY_K if LATENCY_K in args.k else max(args.k)
    with ScriptedLLMServer() as server:
        config = {"llm": {"provider": "openai_compatible", "config": {"base_url": server.base_url, "api_key": "none", "model": "none"}},
                  "history_db_path": str(workdir / f"history-{kind}.db"), "context": {"summary_every": 0}}
        memory = Memory(config, store=store, embedder=embedder)
        try:
            for conv in convs:
                user_id = f"beam-{tag}-{conv.name}"
                started = time.perf_counter()
                added, refusals = ingest(memory, embedder, conv, user_id)
                documents += added
                refused += refusals
                ingest_seconds += time.perf_counter() - started
                embedder.searching = True
                for q in conv.questions:
                    for preset in args.presets:
                        for k in args.k:
                            started, embedding = time.perf_counter(), embedder.query_ms
                            ranked = ranked_ids(memory, q.question, user_id, preset, k)
                            if k == latency_k:
                                latency[preset].append((time.perf_counter() - started) * 1000)
                                search_only[preset].append(latency[preset][-1] - (embedder.query_ms - embedding))
                            scores[preset][k][q.ability].append(recall_at(ranked, q.gold, k))
                            if k == 10 and q.updated and q.original:
                                ordering[preset].append(update_order(ranked, q))
                embedder.searching = False
                memory.delete_all(user_id=user_id)
            assert not server.requests, "the BEAM benchmark must not call the LLM"
        finally:
            memory.close()
            if private is not None:
                private.stop()
    return {"store": kind, "neo4j_server": server_version, "documents": documents, "refused": refused, "ingest_seconds": round(ingest_seconds, 1),
            "presets": {p: summarise(scores[p], ordering[p], latency[p], search_only[p]) for p in args.presets}}


def summarise(by_k: dict[int, dict[str, list[float]]], ordering: list[tuple[bool, bool]], latency: list[float],
              search_only: list[float]) -> dict[str, Any]:
    out: dict[str, Any] = {"latency_ms": common.percentiles(latency, (50, 95)),
                           "without_query_embedding_ms": common.percentiles(search_only, (50, 95)), "recall": {}}
    for k, by_ability in sorted(by_k.items()):
        every = [v for values in by_ability.values() for v in values]
        row: dict[str, Any] = {"all": round(sum(every) / len(every), 4) if every else None, "n": len(every)}
        for ability in sorted(by_ability):
            row[ability] = round(sum(by_ability[ability]) / len(by_ability[ability]), 4)
            row[f"n_{ability}"] = len(by_ability[ability])
        out["recall"][str(k)] = row
    if ordering:
        out["knowledge_update"] = {"n": len(ordering), "updated_in_top10": round(sum(a for a, _ in ordering) / len(ordering), 4),
                                   "updated_above_original": round(sum(b for _, b in ordering) / len(ordering), 4)}
    return out


def print_tables(runs: list[dict[str, Any]], ks: list[int]) -> None:
    short = {a: "".join(w[0] for w in a.split("_")) for a in ABILITIES}
    for run in runs:
        refused = f" ({len(run['refused'])} refused for an input limit)" if run["refused"] else ""
        print(f"\n{run['store']} store: {run['documents']} messages ingested{refused} in {run['ingest_seconds']} s")
        abilities = [a for a in ABILITIES if any(a in r["recall"].get("10", {}) for r in run["presets"].values())]
        headers = ["preset", *(f"R@{k}" for k in ks), *(f"{short[a]}@10" for a in abilities), "KU upd@10", "KU upd>orig",
                   "p50 ms", "p95 ms", "p50 ms w/o q.emb", "p95 ms w/o q.emb"]
        rows = []
        for preset, res in run["presets"].items():
            at10, ku = res["recall"].get("10", {}), res.get("knowledge_update", {})
            rows.append([preset, *(res["recall"][str(k)]["all"] for k in ks), *(at10.get(a) for a in abilities),
                         ku.get("updated_in_top10"), ku.get("updated_above_original"),
                         res["latency_ms"]["p50"], res["latency_ms"]["p95"],
                         res["without_query_embedding_ms"]["p50"], res["without_query_embedding_ms"]["p95"]])
        print(common.table(headers, rows))
    print("abilities: " + ", ".join(f"{v} {k}" for k, v in short.items()))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    convs = load(args.folder)
    if args.conversations:
        convs = [c for c in convs if c.name in set(args.conversations)]
    embedder = load_embedder(args.embedder, None if args.no_disk_cache else "beam")
    run_settings = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "commit": common.git_commit(),
        "folder": str(Path(args.folder).resolve()), "conversations": [c.name for c in convs], "embedder": repr(embedder.cache.inner),
        "messages": sum(len(c.messages) for c in convs), "questions": sum(len(c.questions) for c in convs),
        "skipped_questions": sum(c.skipped for c in convs), "k": args.k, "recall": "one search with limit=k per k",
        "latency": f"wall ms of Memory.search(limit={LATENCY_K if LATENCY_K in args.k else max(args.k)}), query embedding included; 'w/o q.emb': the same less the query embedding's wall time",
        "document_cache": str(embedder.cache.disk) if embedder.cache.disk else None,
        "presets": {p: preset_settings(p) for p in args.presets},
    }
    for key, value in run_settings.items():
        print(f"{key}: {value}", file=sys.stderr)
    runs = []
    with tempfile.TemporaryDirectory(prefix="graphmem-beam-") as tmp:
        for kind in args.stores:
            runs.append(run_store(kind, args, convs, embedder, Path(tmp)))
    print("\n".join(f"{key}: {value}" for key, value in run_settings.items() if key != "presets"))
    print_tables(runs, args.k)
    name = "beam-" + (args.embedder if args.embedder in EMBEDDERS else Path(args.embedder).name)
    path = common.write_result(name, {
        "machine": common.machine_info(next((r["neo4j_server"] for r in runs if r["neo4j_server"]), None)),
        "versions": common.package_versions(), "parameters": {k: v for k, v in vars(args).items() if k != "out"},
        "settings": run_settings, "runs": runs}, args.out)
    print(f"\nwritten {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
