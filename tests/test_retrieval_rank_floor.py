"""Issue 31: the floor the search fusion measures a model's cosines from (its rank floor). bge-small
ranks against 0.5, not its unrelated-question floor 0.34: against 0.34 its candidates keep too
little contrast and the words outvote a better meaning (docs/retrieval.md, "The model's rank
floor"). MiniLM and models the table does not know rank against their query floor."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import pytest
from conftest import MODEL_DIR

from graphmem import InvalidInputError
from graphmem.embeddings import HashingEmbedder, OnnxEmbedder
from graphmem.embeddings.models import known
from graphmem.retrieval import HYBRID, VECTOR_ONLY
from graphmem.retrieval.fusion import fuse, relative
from graphmem.retrieval.scale import on_scale

BGE_DIR = Path(os.environ.get("GRAPHMEM_TEST_BGE_DIR", MODEL_DIR.parent / "bge-small-en-v1.5-onnx"))
needs_models = pytest.mark.skipif(not (BGE_DIR / "model.onnx").is_file() or not (MODEL_DIR / "model.onnx").is_file(),
                                  reason="the shared models are not in ../shared/models")


class Scaled(HashingEmbedder):
    """The deterministic embedder with a model's floors, as a table entry or a folder would give them."""

    def __init__(self, query_floor: float, rank_floor: float | None) -> None:
        super().__init__(dims=8)
        self.score_floor, self.query_floor, self.rank_floor = query_floor, query_floor, rank_floor


def test_the_table_gives_bge_a_rank_floor_and_minilm_none():
    bge, minilm = known("BAAI/bge-small-en-v1.5"), known("all-MiniLM-L6-v2")
    assert bge is not None and bge.rank_floor == pytest.approx(0.5) and bge.query_floor == pytest.approx(0.34)
    assert minilm is not None and minilm.rank_floor is None
    assert Scaled(0.34, None).ranking_floor() == pytest.approx(0.34)  # not given: the query floor
    assert Scaled(0.34, 0.5).ranking_floor() == pytest.approx(0.5)
    assert HashingEmbedder().ranking_floor() == 0.0
    with pytest.raises(InvalidInputError, match="memory_vector_floor"):
        replace(HYBRID, memory_vector_floor=1.0)


def test_on_scale_sets_the_memory_fusion_floor_and_leaves_relations_and_thresholds_on_the_query_floor():
    embedder = Scaled(0.34, 0.5)
    preset, threshold = on_scale(HYBRID, 0.3, embedder)
    assert preset.memory_vector_floor == pytest.approx(0.5)
    assert preset.vector_floor == pytest.approx(0.34)  # relations: their short facts sit below 0.5
    assert preset.seed_threshold == pytest.approx(0.34 + HYBRID.seed_threshold * 0.66)  # thresholds: query floor
    assert threshold == pytest.approx(0.34 + 0.3 * 0.66)
    plain = on_scale(VECTOR_ONLY, None, Scaled(0.34, None))[0]
    assert plain.vector_floor == pytest.approx(0.34) and plain.memory_vector_floor is None
    assert on_scale(HYBRID, 0.3, HashingEmbedder()) == (HYBRID, 0.3)  # MiniLM's scale: nothing changes


def test_a_rank_floor_lets_a_compressed_meaning_outrank_the_words():
    """bge-like cosines: the answer is the meaning's best and matches one word; a distractor
    matches more words and is a little less close. Measured from 0.34 the cosines hardly separate
    and the words win; from the rank floor the meaning's margin counts."""
    cosines = [0.72, 0.62, 0.58, 0.68]  # answer, distractor, two others
    bm25 = [3.0, 5.0, 0.0, 0.0]
    weights = {"vector": 1.0, "bm25": 1.0}

    def best(floor: float) -> int:
        fused = fuse({"vector": relative(cosines, floor), "bm25": bm25}, weights, "adaptive")
        return max(range(len(fused)), key=fused.__getitem__)

    assert best(0.34) == 1
    assert best(0.5) == 0
    # the vector alone ranks the same from any floor: the floor moves contrast, not order
    assert sorted(range(4), key=lambda i: -relative(cosines, 0.5)[i]) == sorted(range(4), key=lambda i: -cosines[i])


@needs_models
def test_the_models_carry_their_rank_floor(tmp_path):
    bge, minilm = OnnxEmbedder(BGE_DIR), OnnxEmbedder(MODEL_DIR)
    assert (bge.rank_floor, bge.ranking_floor()) == (pytest.approx(0.5), pytest.approx(0.5))
    assert (minilm.rank_floor, minilm.ranking_floor()) == (None, 0.0)
    # a private model says its own in graphmem_model.json
    folder = tmp_path / "my-private-model"
    folder.mkdir()
    for name in ("model.onnx", "tokenizer.json", "pooling_config.json"):
        (folder / name).symlink_to(BGE_DIR / name)
    (folder / "graphmem_model.json").write_text(json.dumps({"score_floor": 0.43, "query_floor": 0.34, "rank_floor": 0.45}))
    told = OnnxEmbedder(folder)
    assert (told.query_floor, told.ranking_floor()) == (pytest.approx(0.34), pytest.approx(0.45))


def test_a_cosine_below_the_floor_counts_nothing_in_the_fusion():
    values = relative([0.3, 0.45, 0.6, 0.9], 0.5)
    assert values[2:] == pytest.approx([0.2, 0.8]) and values[0] < 0 and values[1] < 0
    fused = fuse({"vector": values, "bm25": [0.0, 1.0, 0.0, 0.0]}, {"vector": 1.0, "bm25": 1.0}, "adaptive")
    assert fused[0] == 0.0 and fused[3] == pytest.approx(1.0)
    assert relative([-0.2, 0.4], 0.0) == [-0.2, 0.4]  # MiniLM's floor: unchanged


def test_a_vector_search_returns_its_limit_in_cosine_order_below_a_high_rank_floor(tmp_path):
    """Hashing cosines between different texts sit far below 0.9: every candidate is under the
    rank floor, and the plain vector search still returns them all, nearest first."""
    from helpers import llm_config

    from graphmem import Memory
    from graphmem.testing import ScriptedLLMServer

    embedder = Scaled(0.0, 0.9)
    texts = ["alpha beta gamma", "alpha beta", "delta epsilon", "alpha"]
    with ScriptedLLMServer() as server:
        memory = Memory({"llm": llm_config(server), "history_db_path": str(tmp_path / "h.db"),
                         "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "store")}}}, embedder=embedder)
        for t in texts:
            memory.add(t, user_id="u", infer=False)
        found = memory.search("alpha beta gamma delta", user_id="u", preset="vector", limit=4)["results"]
        memory.close()
        assert not server.requests
    assert len(found) == 4
    cosines = [r["scores"]["vector"] for r in found]
    assert cosines == sorted(cosines, reverse=True) and max(cosines) < 0.9
