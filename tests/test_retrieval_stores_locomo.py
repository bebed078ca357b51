"""Both stores alike on a real conversation: the first sessions of a LOCOMO dev conversation stored
verbatim in the embedded store and in Neo4j, every question whose evidence they hold asked of both
with the default search (limit=10), and the two top-10s compared (issue 24).

The data is read from the shared folder (GRAPHMEM_TEST_LOCOMO, default ../shared/data/locomo/
locomo_dev3.json beside the repository), never copied into the repository."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

import pytest
from conftest import MODEL_DIR, SHARED, make_store
from helpers import llm_config

from benchmarks.data.locomo_data import load
from graphmem import Memory
from graphmem.embeddings import OnnxEmbedder
from graphmem.testing import ScriptedLLMServer

LOCOMO = Path(os.environ.get("GRAPHMEM_TEST_LOCOMO", SHARED / "data" / "locomo" / "locomo_dev3.json"))
SESSIONS = 6


@pytest.fixture(scope="module")
def conversation():
    conv = load(LOCOMO)[0]
    held = {d.dia_ids[0] for s in conv.sessions[:SESSIONS] for d in s}
    questions = [q for q in conv.questions if q.evidence and set(q.evidence) <= held and q.category in (1, 2, 3, 4)]
    return conv, questions


@pytest.fixture
def both(request, tmp_path, conversation):
    conv, _ = conversation
    embedder = OnnxEmbedder(MODEL_DIR)
    uid = f"locomo-{uuid.uuid4().hex[:8]}"
    out = []
    with ScriptedLLMServer() as server:
        for kind in ("embedded", "neo4j"):
            store = make_store(kind, request, tmp_path)
            memory = Memory({"llm": llm_config(server), "history_db_path": str(tmp_path / f"{kind}.db"),
                             "context": {"summary_every": 0}}, store=store, embedder=embedder)
            for docs in conv.sessions[:SESSIONS]:
                for d in docs:
                    memory.add(d.content(True), user_id=uid, infer=False, metadata=d.metadata(), timestamp=d.when)
            out.append(memory)
        yield uid, out
        assert not server.requests
        for memory in out:
            memory.delete_all(user_id=uid)
            memory.close()


def _top(memory: Memory, uid: str, question: str, preset: str) -> list[str]:
    return [r["metadata"]["dia_id"] for r in memory.search(question, user_id=uid, limit=10, preset=preset)["results"]]


@pytest.mark.neo4j
def test_both_stores_return_the_same_top_10_on_a_locomo_conversation(both, conversation):
    uid, (embedded, neo4j) = both
    _, questions = conversation
    assert len(questions) >= 30
    same: dict[str, list[bool]] = {}
    recall: dict[str, list[tuple[float, float]]] = {}
    for preset in ("vector", "bm25", "hybrid"):
        for q in questions:
            a, b = _top(embedded, uid, q.question, preset), _top(neo4j, uid, q.question, preset)
            same.setdefault(preset, []).append(set(a) == set(b))
            recall.setdefault(preset, []).append(tuple(len(set(x) & set(q.evidence)) / len(q.evidence) for x in (a, b)))
    rate = {p: sum(v) / len(v) for p, v in same.items()}
    mean = {p: tuple(round(sum(r[i] for r in v) / len(v), 4) for i in (0, 1)) for p, v in recall.items()}
    print(f"{len(questions)} questions; same top-10 set {rate}; recall@10 (embedded, neo4j) {mean}")
    # measured on a server holding only this conversation: vector and bm25 1.0, hybrid 0.98; in the
    # full suite (other data on the server) bm25 0.91, hybrid 1.0. Lucene's term statistics cover
    # the whole database, so other data moves BM25-only text hits near their cut; the default
    # (hybrid) keeps its top-10 and its recall. With MMR on by default a moved text hit can also
    # reorder the head: measured 0.933 (3 of 45 sets differ) on a server holding other tests' data,
    # recall equal; since the time signal counts by its selectivity over the candidates (issue 31),
    # a moved text hit also moves that weight: 0.867 (6 of 45) in a full suite, recall equal. The
    # bound allows 6 of 45 and one question's evidence (1/45 = 0.022) of recall.
    assert rate["vector"] == 1.0
    assert rate["hybrid"] >= 0.86 and abs(mean["hybrid"][0] - mean["hybrid"][1]) <= 0.025, (rate, mean)
    # bm25 alone feels the other data most (measured 0.82-0.91 in full suites): the bound is that most
    # top-10 sets agree and recall stays within 0.05; alone on a server the sets are all the same
    assert rate["bm25"] >= 0.75 and abs(mean["bm25"][0] - mean["bm25"][1]) <= 0.05, (rate, mean)
