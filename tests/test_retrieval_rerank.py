"""The optional reranker stage (graphmem.retrieval.rerank). No cross-encoder model is reachable on
this machine: the stage is tested with a stand-in scorer (a plain Python object with ``score``),
and OnnxCrossEncoder with the one ONNX model we have (MiniLM, a bi-encoder), which it must refuse."""

from __future__ import annotations

import pytest
from conftest import MODEL_DIR, TEST_DIMS
from helpers import llm_config

from graphmem import ConfigError, Memory
from graphmem.embeddings import HashingEmbedder
from graphmem.errors import RerankError
from graphmem.retrieval.rerank import OnnxCrossEncoder
from graphmem.testing import ScriptedLLMServer

TEXTS = ["I like green tea in the morning", "Tea with my sister on Sundays", "My favourite tea shop closed",
         "I drink coffee at work", "Tea ceremony lessons start in May"]


class StandIn:
    """Scores a pair by whether the text holds ``wanted``: a cross-encoder's role, not its quality."""

    name = "stand-in"

    def __init__(self, wanted: str) -> None:
        self.wanted, self.calls = wanted, []

    def score(self, query: str, texts: list[str]) -> list[float]:
        self.calls.append((query, list(texts)))
        return [1.0 if self.wanted in t else 0.0 for t in texts]


class Broken(StandIn):
    def __init__(self, result):
        super().__init__("")
        self.result = result

    def score(self, query: str, texts: list[str]) -> list[float]:
        if isinstance(self.result, Exception):
            raise self.result
        return self.result


@pytest.fixture
def make_memory(store, tmp_path):
    made = []

    def make(reranker=None) -> Memory:
        server = ScriptedLLMServer().__enter__()
        memory = Memory({"llm": llm_config(server), "history_db_path": str(tmp_path / f"h{len(made)}.db")},
                        store=store, embedder=HashingEmbedder(dims=TEST_DIMS), reranker=reranker)
        made.append((memory, server))
        return memory

    yield make
    for _memory, server in made:
        server.__exit__(None, None, None)


def test_the_reranker_reorders_the_fused_head_and_keeps_the_fused_score(make_memory, uid):
    scorer = StandIn("sister")
    memory = make_memory(scorer)
    memory.add(TEXTS, user_id=uid, infer=False)
    plain = memory.search("tea", user_id=uid, limit=3, rerank=False)["results"]
    assert not scorer.calls and all("rerank" not in r["scores"] for r in plain)
    ranked = memory.search("tea", user_id=uid, limit=3)["results"]
    assert len(scorer.calls) == 1 and scorer.calls[0][0] == "tea"
    assert len(scorer.calls[0][1]) == len(TEXTS)  # the fused head (rerank_top 20) holds all five
    assert ranked[0]["memory"] == "Tea with my sister on Sundays"
    assert ranked[0]["score"] == 1.0 and ranked[0]["scores"]["rerank"] == 1.0 and "fused" in ranked[0]["scores"]
    assert len(ranked) == 3 and all(r["scores"]["rerank"] == 0.0 for r in ranked[1:])


@pytest.mark.parametrize("result, message", [
    ([1.0], "returned 1 scores"),
    ([float("nan")] * 5, "not a finite number"),
    (RuntimeError("model crashed"), "model crashed"),
])
def test_a_failing_reranker_is_a_graphmem_error(make_memory, uid, result, message):
    memory = make_memory(Broken(result))
    memory.add(TEXTS, user_id=uid, infer=False)
    with pytest.raises(RerankError, match=message):
        memory.search("tea", user_id=uid, limit=3)


def test_the_onnx_cross_encoder_refuses_a_model_that_is_not_one(tmp_path):
    with pytest.raises(ConfigError, match="is not a cross-encoder"):
        OnnxCrossEncoder(MODEL_DIR)  # MiniLM: token embeddings (pairs, tokens, 384), not logits
    with pytest.raises(ConfigError, match="no model.onnx"):
        OnnxCrossEncoder(tmp_path)


@pytest.mark.parametrize("store", [pytest.param("neo4j", marks=pytest.mark.neo4j)], indirect=True)  # reads both halves at once
def test_a_failed_search_waits_for_its_other_half_before_it_answers(make_memory, store, uid, monkeypatch):
    """The relation half reads on the search pool beside the memory half (a database store): when the
    memory half fails (a crashing reranker), the answer waits for the relation read in flight, so a
    close() right after the error does not shut the connection under it (the Neo4j driver asserted
    in the pool's close: a connection written by two threads)."""
    import threading
    import time

    assert store.concurrent_reads
    memory = make_memory(Broken(RuntimeError("model crashed")))
    memory.add(TEXTS, user_id=uid, infer=False)
    started, finished = threading.Event(), threading.Event()
    search_graph = store.search_graph

    def slow_search_graph(*args, **kwargs):  # the store's own read, made to take its time
        started.set()
        time.sleep(1.0)
        try:
            return search_graph(*args, **kwargs)
        finally:
            finished.set()

    monkeypatch.setattr(store, "search_graph", slow_search_graph)
    with pytest.raises(RerankError, match="model crashed"):
        memory.search("tea", user_id=uid, limit=3)
    assert started.is_set() and finished.is_set()  # before: the error came back with the read still running
