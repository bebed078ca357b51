"""Both stores alike on a BEAM dev conversation (issue 31): the first two batches of a long coding
chat (about 160 messages, long assistant answers with code) imported verbatim with add_many into the
embedded store and into Neo4j, every probing question of the conversation asked of both with the
vector, BM25 and default searches (limit=10), and the two top-10s compared.

The data is read from the shared folder (GRAPHMEM_TEST_BEAM, default ../shared/data/beam/500K/1
beside the repository), never copied into the repository."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from conftest import MODEL_DIR, SHARED, make_store
from helpers import llm_config

from benchmarks.common import CachedEmbedder
from benchmarks.data.beam_data import load
from graphmem import Memory
from graphmem.embeddings import OnnxEmbedder
from graphmem.testing import ScriptedLLMServer

BEAM = Path(os.environ.get("GRAPHMEM_TEST_BEAM", SHARED / "data" / "beam" / "500K" / "1"))
BATCHES = 2


@pytest.fixture(scope="module")
def conversation():
    conv = load(BEAM)[0]
    messages = [m for m in conv.messages if m.batch <= BATCHES]
    return messages, conv.questions


@pytest.fixture
def both(request, tmp_path, conversation):
    messages, _ = conversation
    embedder = CachedEmbedder(OnnxEmbedder(MODEL_DIR))
    embedder.prefetch([m.content for m in messages])  # one pass over the model for both stores
    uid = f"beam-{uuid.uuid4().hex[:8]}"
    items = [{"messages": [{"role": m.role, "content": m.content}], "user_id": uid, "timestamp": m.when,
              "metadata": {"message_id": m.id, "role": m.role}} for m in messages]
    out = []
    with ScriptedLLMServer() as server:
        for kind in ("embedded", "neo4j"):
            store = make_store(kind, request, tmp_path)
            memory = Memory({"llm": llm_config(server), "history_db_path": str(tmp_path / f"{kind}.db"),
                             "context": {"summary_every": 0}}, store=store, embedder=embedder)
            assert memory.add_many(items, infer=False)["added"] == len(items)
            out.append(memory)
        yield uid, out
        assert not server.requests
        for memory in out:
            memory.delete_all(user_id=uid)
            memory.close()


def _top(memory: Memory, uid: str, question: str, preset: str) -> list[int]:
    return [r["metadata"]["message_id"] for r in memory.search(question, user_id=uid, limit=10, preset=preset)["results"]]


@pytest.mark.neo4j
def test_both_stores_return_the_same_top_10_on_a_beam_conversation(both, conversation):
    uid, (embedded, neo4j) = both
    _, questions = conversation
    assert len(questions) >= 15
    same: dict[str, list[bool]] = {}
    overlap: dict[str, list[float]] = {}
    recall: dict[str, list[tuple[float, float]]] = {}
    for preset in ("vector", "bm25", "hybrid"):
        for q in questions:
            a, b = _top(embedded, uid, q.question, preset), _top(neo4j, uid, q.question, preset)
            assert len(a) == 10 and len(b) == 10, (preset, q.question)
            same.setdefault(preset, []).append(set(a) == set(b))
            overlap.setdefault(preset, []).append(len(set(a) & set(b)) / 10)
            recall.setdefault(preset, []).append(tuple(len(set(x) & set(q.gold)) / len(q.gold) for x in (a, b)))
    rate = {p: round(sum(v) / len(v), 3) for p, v in same.items()}
    shared = {p: round(sum(v) / len(v), 3) for p, v in overlap.items()}
    mean = {p: tuple(round(sum(r[i] for r in v) / len(v), 4) for i in (0, 1)) for p, v in recall.items()}
    print(f"{len(questions)} questions; same top-10 set {rate}; top-10 overlap {shared}; recall@10 (embedded, neo4j) {mean}")
    # vector: the same cosines over the same vectors. bm25 and hybrid rank with graphmem's own BM25,
    # but the store's text hits widen the pool: Lucene's statistics cover the whole database and
    # long coding messages share many words, so a text-only candidate near the cut can differ
    # (measured on a server holding benchmark data: same set 0.88-0.94 bm25, 0.76 hybrid; overlap
    # 0.99 / 0.98 and recall equal: the sets differ by a message near the cut, which the bounds check)
    assert rate["vector"] == 1.0, rate
    # BM25 alone feels Lucene's index-wide statistics most: graphmem's BM25 counts document
    # frequencies over the pool, so one fulltext candidate that differs moves every score. Two causes
    # were found. A word the question repeats is one Lucene clause per occurrence: the embedded store
    # now counts it so too (stores/embedded/memory_index.py). On a fresh database holding only this
    # conversation both stores then agree on every bm25 top 10 (same set 17/17, hybrid 16/17; before,
    # 15/17 and 15/17). What is left is Lucene's statistics over the whole database (other scopes,
    # deleted documents until a merge), which the embedded store cannot see: on a server that had
    # held a full BEAM run, bm25 overlap 0.918 and same set 0.412 (0.912 / 0.294 before), hybrid
    # 0.988 / 0.882 (0.953 / 0.706 before), recall equal
    assert shared["hybrid"] >= 0.95 and shared["bm25"] >= 0.9, shared
    assert rate["hybrid"] >= 0.75 and rate["bm25"] >= 0.3, rate
    assert all(abs(embedded_r - neo4j_r) <= 0.03 for embedded_r, neo4j_r in mean.values()), mean
