"""LOCOMO retrieval: recall@k of graphmem's search presets on any LOCOMO-format file.

Per conversation (or per speaker, --scope speaker) one scope; each turn (or annotated observation,
--source observations) is stored verbatim with ``add(infer=False)`` and metadata speaker, session,
session_date, dia_id, timestamp = the session date. Embeddings: all-MiniLM-L6-v2 (ONNX; --embedder
another; documents cached on disk between runs, common.disk_cache_path). Every QA
item is a search; LOCOMO recall@k = |evidence ∩ dia_ids of the top k| / |evidence|, averaged per
category (1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop; 5 adversarial reported apart).
No LLM is called: the LLM endpoint is a local scripted server that must see zero requests.

Honest by construction: R@k comes from a search with ``limit=k`` for each k reported (a larger
limit widens the candidate pool, which changes BM25's statistics and the neighbour context); the
latency is the wall time of the limit=10 ``Memory.search`` call including the query embedding
(questions are never cached; only the stored documents are embedded ahead, per session); the run's
date, data file, commit and every preset's settings are printed with the results.

    python -m benchmarks.retrieval.locomo ../shared/data/locomo/locomo_dev3.json

Another shape, generated (long code answers, instructions stated once; benchmarks.retrieval.locomo_techchat):

    python -m benchmarks.retrieval.locomo_techchat /tmp/techchat.json --seed 1 2 3 4 5 6 7 8
    python -m benchmarks.retrieval.locomo /tmp/techchat.json --presets vector bm25 hybrid hybrid_score_no_session --k 10
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.data.locomo_data import CATEGORIES, Conversation, load
from graphmem import Memory
from graphmem.embeddings import Embedder
from graphmem.retrieval import BM25_ONLY, HYBRID, SearchPreset, get_preset
from graphmem.testing import ScriptedLLMServer

MAIN_CATEGORIES = (1, 2, 3, 4)
LATENCY_K = 10
#: ``hybrid`` with one mechanism of issue 14 or 24 or more taken out, to measure what each buys
#: (``hybrid_score``: fixed fusion weights; ``*_no_session``: no session support; the issue-14/24 round's
#: ablations are without MMR, as measured then; ``hybrid_no_mmr``: the default without MMR; ``hybrid_no_speaker``: without
#: the prior for the user's own words (memories.speaker_prior);
#: ``*decompose``: with question decomposition, retrieval.coverage)
ABLATIONS = {
    "hybrid_plain": SearchPreset("hybrid_plain", {k: v for k, v in HYBRID.weights.items() if k != "time"}),
    "hybrid_neighbours": SearchPreset("hybrid_neighbours", {k: v for k, v in HYBRID.weights.items() if k != "time"},
                                      context=HYBRID.context, neighbours=HYBRID.neighbours),
    "hybrid_time": SearchPreset("hybrid_time", HYBRID.weights),
    "hybrid_score": replace(HYBRID, name="hybrid_score", fusion="score", diversity=0.0),
    "hybrid_no_session": replace(HYBRID, name="hybrid_no_session", session=0.0, diversity=0.0),
    "hybrid_score_no_session": replace(HYBRID, name="hybrid_score_no_session", fusion="score", session=0.0, diversity=0.0),
    "hybrid_no_mmr": replace(HYBRID, name="hybrid_no_mmr", diversity=0.0),
    "hybrid_no_speaker": replace(HYBRID, name="hybrid_no_speaker", speaker=0.0),
    "hybrid_decompose": replace(HYBRID, name="hybrid_decompose", decompose=True),
    "hybrid_no_mmr_decompose": replace(HYBRID, name="hybrid_no_mmr_decompose", diversity=0.0, decompose=True),
    "hybrid_b075": replace(HYBRID, name="hybrid_b075", bm25_b=0.75),
    "bm25_b075": replace(BM25_ONLY, name="bm25_b075", bm25_b=0.75),
}


def preset_named(name: str) -> SearchPreset:
    return ABLATIONS[name] if name in ABLATIONS else get_preset(name)


class DocumentsCached(Embedder):
    """The embedder graphmem sees: stored documents come from the run's cache (filled one batch per
    session, so ingestion is not one model call per turn), while ``searching`` every text goes to
    the model itself, inside the timed search call."""

    def __init__(self, cache: common.CachedEmbedder) -> None:
        super().__init__()
        self.cache, self.dims, self.name, self.score_floor, self.query_floor = cache, cache.dims, cache.name, cache.score_floor, cache.query_floor
        self.rank_floor = cache.rank_floor
        self.searching = False
        self.query_ms = 0.0  # wall ms spent embedding queries (the model's share of a search's latency)

    def _embed(self, texts: list[str]) -> list[list[float]]:
        return self.cache.inner.embed(texts) if self.searching else self.cache.embed(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """A search's query with the relation half's hubness probes (its first search): one model call."""
        self._count_call()
        started = time.perf_counter()
        try:
            return self.cache.inner.embed_queries(texts)
        finally:
            self.query_ms += (time.perf_counter() - started) * 1000


MODELS = common.SHARED / "models"
#: --embedder short names -> model folders (any other value is a folder path)
EMBEDDERS = {"minilm": MODELS / "all-MiniLM-L6-v2-onnx", "bge": MODELS / "bge-small-en-v1.5-onnx"}
#: the same models at int8 (OnnxEmbedder precision; their own document caches: the name differs)
EMBEDDERS |= {f"{name}-int8": folder for name, folder in list(EMBEDDERS.items())}


def load_embedder(choice: str, disk_tag: str | None) -> DocumentsCached:
    """The run's embedder: a short name of EMBEDDERS or an ONNX folder, its documents cached in
    memory and, with ``disk_tag``, on disk between runs (common.disk_cache_path)."""
    model = onnx_model(choice)
    return DocumentsCached(common.CachedEmbedder(model, common.disk_cache_path(model, disk_tag) if disk_tag else None))


def onnx_model(choice: str) -> Any:
    """The OnnxEmbedder of a short name of EMBEDDERS (``-int8``: at int8) or of an ONNX folder."""
    from graphmem.embeddings import OnnxEmbedder

    return OnnxEmbedder(EMBEDDERS.get(choice, Path(choice)), precision="int8" if choice.endswith("-int8") and choice in EMBEDDERS else "fp32")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.retrieval.locomo", description=__doc__.split("\n\n")[0])
    p.add_argument("data_file", help="a LOCOMO-format JSON file (e.g. ../shared/data/locomo/locomo_dev3.json)")
    p.add_argument("--k", type=int, nargs="+", default=[1, 5, 10, 25], help="cut-offs for recall@k")
    p.add_argument("--stores", nargs="+", default=["embedded"], choices=["embedded", "neo4j"])
    p.add_argument("--presets", nargs="+", default=["vector", "bm25", "hybrid", "hybrid_rrf"],
                   help=f"graphmem presets, or ablations of hybrid: {', '.join(ABLATIONS)}")
    p.add_argument("--source", choices=["turns", "observations"], default="turns")
    p.add_argument("--scope", choices=["conversation", "speaker"], default="conversation",
                   help="one scope per conversation, or one per speaker (a question then searches both "
                        "speakers' scopes and the results are merged by score)")
    p.add_argument("--bare-turns", action="store_true", help='store "text" instead of "Speaker: text"')
    p.add_argument("--no-captions", action="store_true", help="leave shared images' captions out of the turns")
    p.add_argument("--embedder", default="minilm", help=f"{' or '.join(EMBEDDERS)}, or an ONNX model folder")
    p.add_argument("--no-disk-cache", action="store_true", help="embed the documents again (nothing read or written)")
    p.add_argument("--neo4j-url", default=None, help="use this Neo4j instead of starting a private one")
    p.add_argument("--bolt-port", type=int, default=7689, help="private Neo4j's bolt port (default 7689)")
    p.add_argument("--http-port", type=int, default=7476)
    p.add_argument("--data-dir", default=None, help="private Neo4j's data folder (default: a temp folder)")
    p.add_argument("--out", default=None, help="JSON output (default benchmarks/results/locomo-<source>.json)")
    return p.parse_args(argv)


def open_store(kind: str, args: argparse.Namespace, dims: int, workdir: Path) -> tuple[Any, str | None, Any]:
    """The store, the Neo4j server's version, and the private Neo4j started for it (stop it after)."""
    if kind == "embedded":
        from graphmem.stores.embedded import EmbeddedStore

        return EmbeddedStore(workdir / "embedded", embedding_dims=dims), None, None
    from graphmem.stores.neo4j import Neo4jStore

    private = None if args.neo4j_url else common.PrivateNeo4j(args.bolt_port, args.http_port, args.data_dir)
    url = args.neo4j_url or private.uri
    return Neo4jStore(url=url, embedding_dims=dims), common.neo4j_server_version(url), private


def scopes_of(conv: Conversation, args: argparse.Namespace, tag: str) -> dict[str, str]:
    """Speaker -> user_id of the scope their documents go to."""
    if args.scope == "conversation":
        return {s: f"locomo-{tag}-{conv.sample_id}" for s in conv.speakers}
    return {s: f"locomo-{tag}-{conv.sample_id}-{s}" for s in conv.speakers}


def ingest(memory: Memory, embedder: DocumentsCached, conv: Conversation, args: argparse.Namespace,
           user_ids: dict[str, str]) -> int:
    """One embedding batch per session, then one add per document (each has its own metadata)."""
    sessions = conv.sessions if args.source == "turns" else conv.observations
    count = 0
    for docs in sessions:
        with_speaker = args.source == "turns" and not args.bare_turns
        embedder.cache.prefetch([d.content(with_speaker) for d in docs])
        embedder.cache.save()
        for doc in docs:
            memory.add(doc.content(with_speaker), user_id=user_ids.get(doc.speaker, next(iter(user_ids.values()))), infer=False,
                       metadata=doc.metadata(), timestamp=doc.when)
            count += 1
    return count


def retrieved_ids(results: list[dict[str, Any]]) -> list[str]:
    out: list[str] = []
    for r in results:
        meta = r.get("metadata") or {}
        out.extend(meta.get("dia_ids") or [meta["dia_id"]])
    return out


def search(memory: Memory, question: str, user_ids: list[str], preset: str, limit: int) -> list[list[str]]:
    """The top ``limit`` results as lists of dia_ids, best first (several scopes: merged by score)."""
    results = []
    for uid in user_ids:
        results.extend(memory.search(question, user_id=uid, limit=limit, preset=preset_named(preset))["results"])
    if len(user_ids) > 1:
        results.sort(key=lambda r: -(r.get("score") or 0.0))
    return [retrieved_ids([r]) for r in results[:limit]]


def recall_at(ranked: list[list[str]], evidence: list[str], k: int) -> float:
    found = {i for ids in ranked[:k] for i in ids}
    return len(found.intersection(evidence)) / len(evidence)


def run_store(kind: str, args: argparse.Namespace, convs: list[Conversation], embedder: DocumentsCached,
              workdir: Path) -> dict[str, Any]:
    store, server_version, private = open_store(kind, args, embedder.dims, workdir)
    tag = uuid.uuid4().hex[:8]
    scores: dict[str, dict[int, dict[int, list[float]]]] = {p: defaultdict(lambda: defaultdict(list)) for p in args.presets}
    latency: dict[str, list[float]] = defaultdict(list)
    search_only: dict[str, list[float]] = defaultdict(list)  # latency less the query embedding
    ingest_seconds, documents = 0.0, 0
    latency_k = LATENCY_K if LATENCY_K in args.k else max(args.k)
    with ScriptedLLMServer() as server:
        config = {"llm": {"provider": "openai_compatible", "config": {"base_url": server.base_url, "api_key": "none", "model": "none"}},
                  "history_db_path": str(workdir / f"history-{kind}.db"),
                  "context": {"summary_every": 0}}  # the rolling summary is an LLM call: off
        memory = Memory(config, store=store, embedder=embedder)
        try:
            for conv in convs:
                user_ids = scopes_of(conv, args, tag)
                started = time.perf_counter()
                documents += ingest(memory, embedder, conv, args, user_ids)
                ingest_seconds += time.perf_counter() - started
                embedder.searching = True
                for q in (q for q in conv.questions if q.evidence):
                    for preset in args.presets:
                        for k in args.k:
                            started, embedding = time.perf_counter(), embedder.query_ms
                            ranked = search(memory, q.question, sorted(set(user_ids.values())), preset, k)
                            if k == latency_k:
                                latency[preset].append((time.perf_counter() - started) * 1000)
                                search_only[preset].append(latency[preset][-1] - (embedder.query_ms - embedding))
                            scores[preset][k][q.category].append(recall_at(ranked, q.evidence, k))
                embedder.searching = False
                for uid in set(user_ids.values()):
                    memory.delete_all(user_id=uid)
            assert not server.requests, "the LOCOMO benchmark must not call the LLM"
        finally:
            memory.close()
            if private is not None:
                private.stop()
    return {"store": kind, "neo4j_server": server_version, "documents": documents, "ingest_seconds": round(ingest_seconds, 1),
            "presets": {p: summarise(scores[p], latency[p], search_only[p]) for p in args.presets}}


def summarise(by_k: dict[int, dict[int, list[float]]], latency: list[float], search_only: list[float]) -> dict[str, Any]:
    out: dict[str, Any] = {"latency_ms": common.percentiles(latency, (50, 95)),
                           "without_query_embedding_ms": common.percentiles(search_only, (50, 95)), "recall": {}}
    for k, by_cat in sorted(by_k.items()):
        main = [v for c in MAIN_CATEGORIES for v in by_cat.get(c, [])]
        row = {"cat1-4": round(sum(main) / len(main), 4) if main else None, "n1-4": len(main)}
        for c in sorted(by_cat):
            row[f"cat{c}"] = round(sum(by_cat[c]) / len(by_cat[c]), 4)
            row[f"n{c}"] = len(by_cat[c])
        out["recall"][str(k)] = row
    return out


def settings(args: argparse.Namespace, convs: list[Conversation], embedder: Embedder) -> dict[str, Any]:
    """What the figures depend on, printed above them and stored in the JSON."""
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": common.git_commit(),
        "data_file": str(Path(args.data_file).resolve()),
        "data_sha256": common.file_sha256(args.data_file)[:16],
        "conversations": [c.sample_id for c in convs],
        "embedder": embedder.name,
        "source": args.source, "scope": args.scope, "bare_turns": args.bare_turns, "captions": not args.no_captions,
        "k": args.k, "recall": "one search with limit=k per k",
        "latency": f"wall ms of Memory.search(limit={LATENCY_K if LATENCY_K in args.k else max(args.k)}), query embedding included; 'w/o q.emb': the same less the query embedding's wall time",
        "presets": {p: preset_settings(p) for p in args.presets},
    }


def preset_settings(name: str) -> dict[str, Any]:
    from dataclasses import asdict

    return {k: v for k, v in asdict(preset_named(name)).items() if k != "name"}


def print_tables(runs: list[dict[str, Any]], ks: list[int]) -> None:
    for run in runs:
        print(f"\n{run['store']} store: {run['documents']} documents ingested in {run['ingest_seconds']} s")
        headers = ["preset", *(f"R@{k}" for k in ks), *(f"{CATEGORIES[c]}@10" for c in (*MAIN_CATEGORIES, 5)), "p50 ms", "p95 ms",
                   "p50 ms w/o q.emb", "p95 ms w/o q.emb"]
        rows = []
        for preset, res in run["presets"].items():
            at10 = res["recall"].get("10", {})
            rows.append([preset, *(res["recall"][str(k)]["cat1-4"] for k in ks),
                         *(at10.get(f"cat{c}") for c in (*MAIN_CATEGORIES, 5)),
                         res["latency_ms"]["p50"], res["latency_ms"]["p95"],
                         res["without_query_embedding_ms"]["p50"], res["without_query_embedding_ms"]["p95"]])
        print(common.table(headers, rows))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    convs = load(args.data_file, captions=not args.no_captions)
    embedder = load_embedder(args.embedder, None if args.no_disk_cache else "locomo")
    run_settings = settings(args, convs, embedder)
    for key, value in run_settings.items():
        print(f"{key}: {value}", file=sys.stderr)
    skipped = sum(c.evidence_issues["empty"] + c.evidence_issues["malformed"] for c in convs)
    print(f"{len(convs)} conversations, {sum(len(c.questions) for c in convs)} QA items "
          f"({skipped} skipped for empty or malformed evidence), source={args.source}, scope={args.scope}", file=sys.stderr)
    runs = []
    with tempfile.TemporaryDirectory(prefix="graphmem-locomo-") as tmp:
        for kind in args.stores:
            runs.append(run_store(kind, args, convs, embedder, Path(tmp)))
    print("\n".join(f"{key}: {value}" for key, value in run_settings.items() if key != "presets"))
    for name, conf in run_settings["presets"].items():
        print(f"preset {name}: {conf}")
    print_tables(runs, args.k)
    issues: dict[str, int] = defaultdict(int)
    for c in convs:
        for status, n in c.evidence_issues.items():
            issues[status] += n
    path = common.write_result(
        f"locomo-{args.source}" + ("-speaker" if args.scope == "speaker" else "") + ("" if args.embedder == "minilm" else f"-{Path(args.embedder).name}"),
        {"machine": common.machine_info(next((r["neo4j_server"] for r in runs if r["neo4j_server"]), None)),
         "versions": common.package_versions(),
         "parameters": {**{k: v for k, v in vars(args).items() if k != "out"}, "data_file": str(Path(args.data_file).resolve()),
                        "conversations": [c.sample_id for c in convs], "seed": None, "embedder": embedder.name},
         "settings": run_settings,
         "evidence": dict(issues), "runs": runs},
        args.out,
    )
    print(f"\nwritten {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
