"""Embedders as models (issue 31): pooling, query/passage instructions, max length and score scale
come with the model (a table of well-known names, then its folder's files, then explicit settings),
queries and stored texts are embedded differently where the model asks for it, and thresholds are
relative similarities mapped onto each model's own cosine scale. Real models from ../shared/models."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import MODEL_DIR
from helpers import llm_config
from hub_server import HubServer

from graphmem import Memory
from graphmem.embeddings import HashingEmbedder, OnnxEmbedder, create_embedder
from graphmem.embeddings.models import BGE_QUERY, known
from graphmem.errors import ConfigError
from graphmem.retrieval import HYBRID
from graphmem.retrieval.hubness import PROBES
from graphmem.retrieval.scale import on_scale
from graphmem.testing import ScriptedLLMServer

BGE_DIR = Path(os.environ.get("GRAPHMEM_TEST_BGE_DIR", MODEL_DIR.parent / "bge-small-en-v1.5-onnx"))
pytestmark = pytest.mark.skipif(not (BGE_DIR / "model.onnx").is_file() or not (MODEL_DIR / "model.onnx").is_file(),
                                reason="the shared models are not in ../shared/models")


@pytest.fixture(scope="module")
def bge():
    return OnnxEmbedder(BGE_DIR)


@pytest.fixture(scope="module")
def minilm():
    return OnnxEmbedder(MODEL_DIR)


def test_the_table_knows_models_by_any_spelling_of_their_name():
    for name in ("BAAI/bge-small-en-v1.5", "bge-small-en-v1.5-onnx", "models--BAAI--bge-small-en-v1.5", "BGE-SMALL-EN-V1.5"):
        profile = known(name)
        assert profile is not None and profile.pooling == "cls" and profile.query_instruction == BGE_QUERY, name
    e5 = known("intfloat/e5-small-v2")
    assert e5 is not None and (e5.query_instruction, e5.passage_instruction) == ("query: ", "passage: ")
    assert known("sentence-transformers/all-MiniLM-L6-v2").score_floor == 0.0  # type: ignore[union-attr]
    assert known("someone/unknown-model") is None


def test_bge_folder_works_right_with_no_extra_keys(bge, minilm):
    # the model takes 512 tokens; graphmem feeds 256 unless told (DEFAULT_MAX_LENGTH), as with MiniLM
    assert (bge.pooling, bge.query_instruction, bge.passage_instruction, bge.max_length) == ("cls", BGE_QUERY, "", 256)
    assert OnnxEmbedder(BGE_DIR, max_length=512).max_length == 512
    assert (bge.score_floor, bge.query_floor) == (pytest.approx(0.43), pytest.approx(0.34))
    assert (minilm.pooling, minilm.query_instruction, minilm.max_length, minilm.score_floor, minilm.query_floor) == ("mean", "", 256, 0.0, 0.0)


def test_the_query_instruction_goes_to_queries_only(bge, minilm):
    text = "Where do I live now?"
    query, document = bge.embed_query(text), bge.embed([text])[0]
    assert np.allclose(query, bge.embed([BGE_QUERY + text])[0], atol=1e-6)
    assert not np.allclose(query, document, atol=1e-3)
    assert np.allclose(minilm.embed_query(text), minilm.embed([text])[0], atol=1e-6)  # MiniLM has no instruction
    calls = bge.calls
    bge.embed_query(text)
    assert bge.calls == calls + 1


def test_the_instruction_makes_bge_rank_the_answer_first(bge):
    passages = ["I moved to Denver last month.", "The cat sleeps on the sofa.", "Quarterly revenue rose by four percent."]
    vectors = np.asarray(bge.embed(passages))
    scores = vectors @ np.asarray(bge.embed_query("Where do I live now?"))
    assert int(np.argmax(scores)) == 0


def test_the_floor_is_measured_for_a_model_the_table_does_not_know(tmp_path, bge):
    folder = tmp_path / "my-private-model"
    folder.mkdir()
    for name in ("model.onnx", "tokenizer.json", "pooling_config.json"):
        (folder / name).symlink_to(BGE_DIR / name)
    unknown = OnnxEmbedder(folder)
    assert (unknown.pooling, unknown.query_instruction, unknown.max_length) == ("cls", "", 256)
    assert 0.35 < unknown.score_floor < 0.5  # bge's unrelated sentences sit around 0.4-0.5 (table: 0.43)
    assert 0.25 < unknown.query_floor < 0.5  # no instruction known for it: questions embedded as they are
    assert unknown.calls == 0  # the calibration is not a caller's call
    # a folder's sentence-transformers files and graphmem_model.json say the rest
    (folder / "config_sentence_transformers.json").write_text(json.dumps({"prompts": {"query": "q: ", "passage": "p: "}}))
    (folder / "sentence_bert_config.json").write_text(json.dumps({"max_seq_length": 128}))  # below the default: it bounds
    (folder / "graphmem_model.json").write_text(json.dumps({"score_floor": 0.5, "query_floor": 0.4}))
    told = OnnxEmbedder(folder)
    assert (told.query_instruction, told.passage_instruction, told.max_length, told.score_floor, told.query_floor) == ("q: ", "p: ", 128, 0.5, 0.4)
    assert np.allclose(told.embed(["x"])[0], told.embed_query("x"), atol=1e-6) is False
    # explicit settings win over both
    mine = OnnxEmbedder(folder, query_instruction="", score_floor=0.2, pooling="mean")
    assert (mine.query_instruction, mine.score_floor, mine.query_floor, mine.pooling) == ("", 0.2, 0.4, "mean")  # per field


@pytest.mark.parametrize("kwargs, named", [({"score_floor": 1.0}, "score_floor"), ({"pooling": "median"}, "pooling"),
                                           ({"query_instruction": 3}, "query_instruction"), ({"max_length": 1}, "max_length")])
def test_bad_model_settings_are_config_errors(kwargs, named):
    with pytest.raises(ConfigError, match=named):
        create_embedder("onnx", {"model_dir": str(BGE_DIR), **kwargs})


def test_bge_by_hub_name_needs_no_extra_keys(monkeypatch, tmp_path):
    files = {"onnx/model.onnx": BGE_DIR / "model.onnx", "tokenizer.json": BGE_DIR / "tokenizer.json"}
    for var in ("HF_HOME", "HF_HUB_CACHE", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GRAPHMEM_HOME", str(tmp_path / "home"))
    with HubServer("BAAI/bge-small-en-v1.5", files, lfs={"onnx/model.onnx"}) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
        embedder = create_embedder("onnx", {"model": "BAAI/bge-small-en-v1.5"})
    # no pooling file in this repository: the table says CLS, as the model card does
    assert (embedder.pooling, embedder.query_instruction, embedder.max_length) == ("cls", BGE_QUERY, 256)
    assert (embedder.score_floor, embedder.query_floor) == (pytest.approx(0.43), pytest.approx(0.34))
    local = OnnxEmbedder(BGE_DIR)
    assert np.allclose(embedder.embed_query("hello there"), local.embed_query("hello there"), atol=1e-5)


def test_thresholds_are_relative_to_the_models_scale(bge, minilm):
    assert minilm.cosine_for(0.7) == 0.7 and HashingEmbedder().cosine_for(0.3) == 0.3  # MiniLM's scale is the reference
    assert bge.cosine_for(0.0) == pytest.approx(0.43) and bge.cosine_for(1.0) == pytest.approx(1.0)
    assert bge.cosine_for(0.7) == pytest.approx(0.43 + 0.7 * 0.57)
    assert bge.cosine_for(0.0, query=True) == pytest.approx(0.34) and bge.cosine_for(1.0, query=True) == pytest.approx(1.0)
    preset, threshold = on_scale(HYBRID, 0.5, bge)
    assert preset.seed_threshold == pytest.approx(bge.cosine_for(HYBRID.seed_threshold, query=True))
    assert threshold == pytest.approx(bge.cosine_for(0.5, query=True))
    assert on_scale(HYBRID, 0.5, minilm) == (HYBRID, 0.5)


def test_search_threshold_means_the_same_with_either_model(tmp_path, bge, minilm):
    """An unrelated memory is cut by threshold 0.3 with both models, the related one kept by both:
    on raw cosines bge's unrelated texts (0.4-0.5) would pass a MiniLM-tuned 0.3."""
    texts = ["I moved to Denver last month.", "Penguins huddle together in the Antarctic winter."]
    kept = {}
    with ScriptedLLMServer() as server:
        for embedder in (minilm, bge):
            memory = Memory({"llm": llm_config(server), "history_db_path": str(tmp_path / f"{embedder.name}.db"),
                             "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / embedder.name)}}},
                            embedder=embedder)
            for t in texts:
                memory.add(t, user_id="u", infer=False)
            found = memory.search("Which city do I live in?", user_id="u", preset="vector", threshold=0.3)["results"]
            kept[embedder.name] = [r["memory"] for r in found]
            memory.close()
        assert not server.requests
    assert kept == {minilm.name: texts[:1], bge.name: texts[:1]}, kept
    shutil.rmtree(tmp_path, ignore_errors=True)


class Recording(HashingEmbedder):
    """e5-style instructions on the deterministic embedder, recording what reaches the model."""

    query_instruction, passage_instruction = "query: ", "passage: "

    def __init__(self) -> None:
        super().__init__(dims=384)
        self.seen: list[str] = []

    def _embed(self, texts):
        self.seen.extend(texts)
        return super()._embed(texts)


def test_every_caller_embeds_queries_as_queries_and_stored_texts_as_passages(tmp_path):
    embedder = Recording()
    with ScriptedLLMServer() as server:
        memory = Memory({"llm": llm_config(server), "history_db_path": str(tmp_path / "h.db"),
                         "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "g")}}}, embedder=embedder)
        added = memory.add("I moved to Denver", user_id="u", infer=False)["results"][0]
        memory.add_many([{"messages": "I like tea", "user_id": "u"}], infer=False)
        memory.update(added["id"], "I moved to Boulder")
        memory.search("where do I live?", user_id="u")
        memory.close()
    # the first search's batch also carries the hubness probes, embedded as queries too (retrieval.hubness)
    assert embedder.seen == ["passage: I moved to Denver", "passage: I like tea", "passage: I moved to Boulder", "query: where do I live?",
                             *(f"query: {p}" for p in PROBES)]
