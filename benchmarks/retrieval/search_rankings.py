"""Search rankings of a BEAM- or LOCOMO-format set, to check that a change keeps them: every
question's top k (each result's metadata, which names its message, and score, as ``Memory.search``
returns them) per preset, written as JSON;
``--compare A B`` lists the searches whose top k differ.

A cost change should rank as before: run this on the change and on main (a ``git archive`` of it,
with ``PYTHONPATH`` pointing there and this file run by its path), then compare. The query vectors
are computed before any search, so the model's speed plays no part; documents come from the
benchmarks' disk cache (common.disk_cache_path). No LLM is called.

    python -m benchmarks.retrieval.search_rankings beam ../shared/data/beam/500K --out /tmp/after.json
    python -m benchmarks.retrieval.search_rankings locomo ../shared/data/locomo/locomo_dev3.json --out /tmp/after.json
    python -m benchmarks.retrieval.search_rankings --compare /tmp/before.json /tmp/after.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from benchmarks.data import beam_data, locomo_data
from benchmarks.retrieval import beam, locomo
from graphmem import Memory
from graphmem.embeddings import Embedder
from graphmem.stores.embedded import EmbeddedStore
from graphmem.testing import ScriptedLLMServer


class QueryVectors(Embedder):
    """Documents from the run's cache, queries from vectors embedded once, ahead of the searches."""

    def __init__(self, documents: locomo.DocumentsCached) -> None:
        super().__init__()
        self.documents = documents
        self.vectors: dict[str, list[float]] = {}
        self.dims, self.name = documents.dims, documents.name
        self.score_floor, self.query_floor, self.rank_floor = documents.score_floor, documents.query_floor, documents.rank_floor

    def _embed(self, texts: list[str]) -> list[list[float]]:
        return self.documents.cache.embed(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.embed_queries([text])[0]

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        self._count_call()
        missing = [t for t in dict.fromkeys(texts) if t not in self.vectors]
        if missing:
            self.vectors.update(zip(missing, self.documents.cache.inner.embed_queries(missing), strict=True))
        return [self.vectors[t] for t in texts]


def ingest(memory: Memory, embedder: QueryVectors, kind: str, conv: Any, n: int) -> tuple[str, list[str]]:
    """One conversation into its own scope; returns the scope's user id and its questions."""
    if kind == "beam":
        user_id = f"beam-{conv.name}"
        beam.ingest(memory, embedder.documents, conv, user_id)
        return user_id, [q.question for q in conv.questions]
    args = argparse.Namespace(source="turns", bare_turns=False, scope="conversation")
    user_ids = locomo.scopes_of(conv, args, f"r{n}")
    locomo.ingest(memory, embedder.documents, conv, args, user_ids)
    return next(iter(user_ids.values())), [q.question for q in conv.questions if q.evidence]


def rankings(kind: str, path: str, embedder_name: str, presets: list[str], k: int) -> dict[str, Any]:
    convs = beam_data.load(path) if kind == "beam" else locomo_data.load(path)
    embedder = QueryVectors(locomo.load_embedder(embedder_name, kind))
    out: dict[str, Any] = {"set": kind, "data": str(Path(path).resolve()), "embedder": embedder_name, "k": k, "searches": {}}
    with tempfile.TemporaryDirectory(prefix="graphmem-rankings-") as tmp, ScriptedLLMServer() as server:
        config = {"llm": {"provider": "openai_compatible", "config": {"base_url": server.base_url, "api_key": "none", "model": "none"}},
                  "history_db_path": str(Path(tmp) / "history.db"), "context": {"summary_every": 0}}
        memory = Memory(config, store=EmbeddedStore(Path(tmp) / "store", embedding_dims=embedder.dims), embedder=embedder)
        try:
            for n, conv in enumerate(convs):
                user_id, questions = ingest(memory, embedder, kind, conv, n)
                embedder.embed_queries(questions)
                for preset in presets:
                    for i, question in enumerate(questions):
                        found = memory.search(question, user_id=user_id, limit=k, preset=locomo.preset_named(preset))["results"]
                        out["searches"][f"{n}|{i}|{preset}"] = [[r.get("metadata"), r.get("score")] for r in found]  # ids are per run
            assert not server.requests, "ranking must not call the LLM"
        finally:
            memory.close()
    return out


def compare(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The searches whose top k (ids, then scores) differ; both runs must hold the same searches."""
    if before["searches"].keys() != after["searches"].keys():
        raise SystemExit("the two runs hold different searches (another set, preset list or k)")
    return [key for key, ranked in before["searches"].items() if after["searches"][key] != ranked]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.retrieval.search_rankings", description=__doc__.split("\n\n")[0])
    p.add_argument("set", nargs="?", choices=["beam", "locomo"])
    p.add_argument("path", nargs="?", help="a BEAM folder or a LOCOMO JSON file")
    p.add_argument("--embedder", default="minilm", help="minilm or bge, or an ONNX model folder")
    p.add_argument("--presets", nargs="+", default=["vector", "bm25", "hybrid"])
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--out", help="JSON output")
    p.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="compare two outputs instead")
    args = p.parse_args(argv)
    if args.compare:
        before, after = (json.loads(Path(f).read_text()) for f in args.compare)
        differ = compare(before, after)
        print(f"{len(before['searches'])} searches, {len(differ)} with another top {before['k']}" + (f": {differ[:20]}" if differ else ""))
        return 1 if differ else 0
    if not (args.set and args.path and args.out):
        p.error("give a set, its path and --out (or --compare BEFORE AFTER)")
    result = rankings(args.set, args.path, args.embedder, args.presets, args.k)
    Path(args.out).write_text(json.dumps(result))
    print(f"{len(result['searches'])} searches written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
