"""Candidate pools: what the store hands the ranking for each question, captured once per dataset,
embedder and store, so every ranking rule can be scored offline by graphmem's own ranking code
(retrieval.graph.rank_relations, retrieval.memories._rank) without embedding or querying again.

A pool is exactly what ``Memory.search`` computes before it ranks: the query embedded as search
embeds it (retrieval.hubness.query_vectors), the preset put on the model's scale (retrieval.scale.
on_scale), the store's candidates with their per-signal scores. Relations are captured twice, with
the store's hubness correction and without (``hubness`` is a store-side rule). Pools are pickled
under the temp folder, keyed by dataset, embedder and the code's commit, so a rerun is free.
"""

from __future__ import annotations

import hashlib
import pickle
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.data.graph_data import UserGraph
from graphmem import Memory
from graphmem.retrieval import get_preset
from graphmem.retrieval.graph import graph_query
from graphmem.retrieval.hubness import query_vectors
from graphmem.retrieval.scale import on_scale
from graphmem.schema import facts
from graphmem.testing import ScriptedLLMServer
from graphmem.types import Relation, Scope

POOL_DIR = Path(tempfile.gettempdir()) / "graphmem-bench-pools"


@dataclass
class RelationCase:
    question: str
    slice: str
    gold: list[str]
    self_name: str
    hops: int
    #: (hubness, name_left_out) -> the store's candidates (scores: vector, seed, fulltext); hubness is a
    #: store-side rule, name_left_out what a relation's embedding says (schema.facts.fact_meaning)
    pools: dict[tuple[float, bool], list[Relation]] = field(default_factory=dict)
    #: the plain baseline's order: cosine of the question and each visible triple as a sentence
    baseline: list[str] = field(default_factory=list)


def _key(*parts: object) -> str:
    return hashlib.sha1(repr(parts).encode()).hexdigest()[:12]


def cached(name: str, parts: tuple[object, ...], build: Any) -> Any:
    POOL_DIR.mkdir(parents=True, exist_ok=True)
    path = POOL_DIR / f"{name}-{_key(*parts)}.pkl"
    if path.is_file():
        return pickle.loads(path.read_bytes())
    value = build()
    path.write_bytes(pickle.dumps(value))
    return value


def memory_for(embedder: Any, workdir: Path, server: ScriptedLLMServer) -> Memory:
    from graphmem.stores.embedded import EmbeddedStore

    store = EmbeddedStore(workdir / "embedded", embedding_dims=embedder.dims)
    config = {"llm": {"provider": "openai_compatible", "config": {"base_url": server.base_url, "api_key": "none", "model": "none"}},
              "history_db_path": str(workdir / "history.db"), "context": {"summary_every": 0}}
    return Memory(config, store=store, embedder=embedder)


HUBNESS = (0.0, 0.75)
#: the two ways of embedding a relation of the user's own node (schema.facts.fact_meaning)
NAME_LEFT_OUT = (True, False)


def relation_cases(graphs: list[UserGraph], embedder: Any, baseline: dict[str, list[str]]) -> list[RelationCase]:
    """Every question of ``graphs`` with its pools (embedded store, the default preset's pool sizes),
    once per hubness and per way of embedding the user's own relations (a store of its own each)."""
    cases = [RelationCase(q.text, q.slice, list(q.gold), g.user_id, q.hops, baseline=baseline.get(q.text + "\x1e" + g.user_id, []))
             for g in graphs for q in g.questions]
    for name_left_out in NAME_LEFT_OUT:
        _capture(graphs, embedder, cases, name_left_out)
    return cases


def _capture(graphs: list[UserGraph], embedder: Any, cases: list[RelationCase], name_left_out: bool) -> None:
    from benchmarks.retrieval.graph_retrieval import load

    at = iter(cases)
    with tempfile.TemporaryDirectory(prefix="graphmem-pools-") as tmp, ScriptedLLMServer() as server:
        memory = memory_for(embedder, Path(tmp), server)
        try:
            for g in graphs:
                load(memory, g)
                scope = Scope.of(user_id=g.user_id)
                if name_left_out != facts.NAME_LEFT_OUT:  # the load embedded by the shipped rule already
                    _embed_meanings(memory, g, name_left_out)
                for q in g.questions:
                    case = next(at)
                    embedding, centre = query_vectors(memory.embedder, q.text)
                    for hub in HUBNESS:
                        preset, _ = on_scale(replace(get_preset(None), relation_hubness=hub), None, memory.embedder)
                        ask = graph_query(scope, q.text, embedding, preset, q.as_of, None, q.hops, None, centre)
                        case.pools[(hub, name_left_out)] = memory.store.search_graph(scope, ask)
        finally:
            memory.close()


def _embed_meanings(memory: Memory, g: UserGraph, name_left_out: bool) -> None:
    """Every relation version's fact embedding made as ``fact_meaning`` with ``name_left_out`` says
    (what ``graphmem reindex --all`` writes); the fact texts are kept."""
    from graphmem.lifecycle.reindex import fact_of, meaning_of
    from graphmem.stores.base import RelationFact

    vectors = memory.embedder.embed([meaning_of(r, g.user_id, name_left_out) for r in g.relations])
    memory.store.set_relation_facts(Scope.of(user_id=g.user_id), [RelationFact(r.id, r.source_id, fact_of(r, g.user_id), v)
                                                                  for r, v in zip(g.relations, vectors, strict=True)])


def baseline_orders(graphs: list[UserGraph], embedder: Any, depth: int = 10) -> dict[str, list[str]]:
    """The plain baseline per question: relation ids by the cosine of the question (as search embeds
    it) and each relation visible at its time written "source (type) relation destination (type)"."""
    import numpy as np

    from benchmarks.data.graph_data import sentence

    out: dict[str, list[str]] = {}
    for g in graphs:
        types = {e.id: e.entity_type for e in g.entities.values()}
        for q in g.questions:
            rels = g.visible(q.as_of)
            vectors = np.array(embedder.embed([sentence(r, types) for r in rels]))
            cos = vectors @ np.array(embedder.embed_query(q.text))
            out[q.text + "\x1e" + g.user_id] = [rels[i].id for i in np.argsort(-cos, kind="stable")[:depth]]
    return out


def relation_pools(dataset: str, graphs: list[UserGraph], embedder_name: str, embedder: Any) -> list[RelationCase]:
    def build() -> list[RelationCase]:
        started = time.perf_counter()
        texts = [q.text for g in graphs for q in g.questions] + [e.name for g in graphs for e in g.entities.values()]
        embedder.prefetch(texts)
        cases = relation_cases(graphs, embedder, baseline_orders(graphs, embedder))
        print(f"  pools {dataset}/{embedder_name}: {len(cases)} questions in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        return cases

    fingerprint = [(g.user_id, len(g.relations), [q.text for q in g.questions]) for g in graphs]
    return cached(f"rel-{dataset}-{embedder_name}", (fingerprint, code_version()), build)  # type: ignore[no-any-return]


def code_version() -> str:
    """A hash of the code a pool depends on (stores, facts, loading, query embedding), so a pool is
    captured again when it changes and not after every commit."""
    root = common.REPO_ROOT / "graphmem"
    files = sorted([*root.glob("stores/**/*.py"), *root.glob("schema/*.py"), root / "lifecycle" / "load.py",
                    root / "retrieval" / "hubness.py", *common.REPO_ROOT.glob("cypher/*.cypher")])
    return hashlib.sha1(b"".join(f.read_bytes() for f in files)).hexdigest()[:12]
