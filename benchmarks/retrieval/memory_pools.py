"""Memory candidate pools (benchmarks.retrieval.pools does relations): each question's candidates,
conversation neighbours and dated memories exactly as retrieval.memories.search_memories gathers them
for the default preset, captured once per dataset and embedder; ``MemoryCase.rank`` then ranks them
with graphmem's own ``_rank`` under any setting of the rules.

Datasets: ``locomo`` (a LOCOMO-format file: every turn stored verbatim, one scope per conversation,
recall@10 of the evidence turns), ``beam`` (a BEAM-format folder: every message stored verbatim with
its role, recall@10 of the gold messages), ``techchat`` (the team's generated technical chat,
benchmarks.locomo_techchat, in LOCOMO's format and metric).
"""

from __future__ import annotations

import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from benchmarks.data import locomo_data
from benchmarks.retrieval import beam, locomo
from benchmarks.retrieval.pools import cached, code_version, memory_for
from graphmem.retrieval import get_preset
from graphmem.retrieval.hubness import query_vectors
from graphmem.retrieval.memories import OVERFETCH, _own_scores, _rank
from graphmem.retrieval.presets import SearchPreset
from graphmem.retrieval.scale import on_scale
from graphmem.retrieval.when import QueryTime, parse_query
from graphmem.stores.base import MemoryQuery
from graphmem.stores.memory_context import ContextQuery, MemoryContext
from graphmem.testing import ScriptedLLMServer
from graphmem.types import MemoryItem, Scope, utcnow

K = 10


@dataclass
class MemoryCase:
    question: str
    gold: list[str]
    category: str
    candidates: list[MemoryItem]
    context: MemoryContext
    when: QueryTime | None
    floor: float  # the memory floor on_scale sets
    query_floor: float

    def rank(self, preset: SearchPreset) -> list[MemoryItem]:
        """The top K under ``preset`` as search would rank this pool: without neighbours when the
        preset fetches none, without dated memories when it weighs no time."""
        preset = replace(preset, memory_vector_floor=self.floor, vector_floor=self.query_floor)
        # _rank reads each item's vector score, text, times and role and writes its own scores: the
        # captured items are reused, not copied (a copy per ranking was most of the time)
        context = MemoryContext(neighbours=list(self.context.neighbours), dated=list(self.context.dated))
        pool = {m.id: m for m in self.candidates}
        when = self.when if preset.weights.get("time") else None
        if when and when.spans:
            for item in context.dated:
                pool.setdefault(item.id, item)
        if preset.neighbours and preset.context:
            for n in context.neighbours:
                pool.setdefault(n.item.id, n.item)
        else:
            context.neighbours = []
        return _rank(pool, context, self.question, preset, when, K)


def ids_of(item: MemoryItem) -> list[str]:
    meta = item.metadata or {}
    if "message_id" in meta:
        return [str(meta["message_id"])]
    return [str(i) for i in (meta.get("dia_ids") or [meta.get("dia_id")])]


def recall(case: MemoryCase, ranked: list[MemoryItem]) -> float:
    found = {i for m in ranked[:K] for i in ids_of(m)}
    return len(found.intersection(case.gold)) / len(case.gold)


def capture(memory: Any, scope: Scope, question: str, gold: list[str], category: str) -> MemoryCase:
    """What search_memories gathers for the default preset, before it ranks."""
    preset, _ = on_scale(get_preset(None), None, memory.embedder)
    embedding, _centre = query_vectors(memory.embedder, question)
    when = parse_query(question, utcnow())
    store = memory.store
    candidates = store.search_memories(scope, MemoryQuery(embedding, question, top_k=max(K * OVERFETCH, 30)))
    own = _own_scores(candidates, question, preset, when, record=False)
    seeds = [i for i in sorted(own, key=lambda i: -own[i])[:K] if any(m.id == i and m.turn for m in candidates)]
    ask = ContextQuery(embedding, seeds, preset.neighbours, preset.neighbours, time_k=max(K * OVERFETCH, 30))
    if when.spans:
        ask.time_from, ask.time_to = when.start, when.end
    context = store.memory_context(scope, ask) if (seeds or when.spans) else MemoryContext()
    for m in candidates:
        m.scores = {"vector": m.scores.get("vector", 0.0)}
    floor = preset.memory_vector_floor if preset.memory_vector_floor is not None else preset.vector_floor
    return MemoryCase(question, gold, category, candidates, context, when, floor, preset.vector_floor)


def _locomo_cases(memory: Any, embedder: Any, path: Path, tag: str) -> list[MemoryCase]:
    cases = []
    for conv in locomo_data.load(path):
        uid = f"{tag}-{conv.sample_id}"
        docs = [d for s in conv.sessions for d in s]
        embedder.cache.prefetch([d.content(True) for d in docs])
        embedder.cache.save()
        for d in docs:
            memory.add(d.content(True), user_id=uid, infer=False, metadata=d.metadata(), timestamp=d.when)
        embedder.searching = True
        for q in (q for q in conv.questions if q.evidence):
            cases.append(capture(memory, Scope.of(user_id=uid), q.question, list(q.evidence), str(q.category)))
        embedder.searching = False
        memory.delete_all(user_id=uid)
    return cases


def _beam_cases(memory: Any, embedder: Any, path: Path, tag: str) -> list[MemoryCase]:
    cases = []
    for conv in beam.load(path):
        uid = f"{tag}-{conv.name}"
        beam.ingest(memory, embedder, conv, uid)
        embedder.searching = True
        for q in conv.questions:
            cases.append(capture(memory, Scope.of(user_id=uid), q.question, [str(i) for i in q.gold], q.ability))
        embedder.searching = False
        memory.delete_all(user_id=uid)
    return cases


def memory_pools(dataset: str, path: Path, embedder_name: str) -> list[MemoryCase]:
    def build() -> list[MemoryCase]:
        started = time.perf_counter()
        embedder = locomo.load_embedder(embedder_name, "beam" if dataset == "beam" else "locomo")  # the benchmarks' own document caches
        with tempfile.TemporaryDirectory(prefix="graphmem-mpools-") as tmp, ScriptedLLMServer() as server:
            memory = memory_for(embedder, Path(tmp), server)
            try:
                read = _beam_cases if dataset == "beam" else _locomo_cases
                cases = read(memory, embedder, path, dataset)
            finally:
                memory.close()
        print(f"  pools {dataset}/{embedder_name}: {len(cases)} questions in {time.perf_counter() - started:.0f} s", file=sys.stderr)
        return cases

    return cached(f"mem-{dataset}-{embedder_name}", (str(path), code_version()), build)  # type: ignore[no-any-return]
