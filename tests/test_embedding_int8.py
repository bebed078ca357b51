"""The local embedder at int8 (issue 31): the model is quantized once into $GRAPHMEM_HOME/cache,
loaded from there after, made again when damaged; its vectors stay close to fp32 ones, its identity
(name, fingerprint) carries the precision, and a store built at one precision refuses the other.
Real models from ../shared/models, quantized for real (onnx + onnxruntime)."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import MODEL_DIR
from helpers import llm_config

from graphmem import Memory
from graphmem.embeddings import OnnxEmbedder, create_embedder, quantize
from graphmem.errors import ConfigError
from graphmem.testing import ScriptedLLMServer

BGE_DIR = Path(os.environ.get("GRAPHMEM_TEST_BGE_DIR", MODEL_DIR.parent / "bge-small-en-v1.5-onnx"))
pytestmark = pytest.mark.skipif(not (BGE_DIR / "model.onnx").is_file() or not (MODEL_DIR / "model.onnx").is_file(),
                                reason="the shared models are not in ../shared/models")
SENTENCES = ["Melanie painted a sunrise over the lake last summer.",
             "The integration test was flaky until we pinned the Postgres image.",
             "What did Caroline say about the adoption agency?",
             "I moved to Denver in March and started a new job at a bakery."]


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """One GRAPHMEM_HOME for the module: each model is quantized once for all its tests."""
    folder = tmp_path_factory.mktemp("home")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("GRAPHMEM_HOME", str(folder))
        yield folder


@pytest.mark.parametrize("folder", [MODEL_DIR, BGE_DIR], ids=["minilm", "bge"])
def test_int8_vectors_are_unit_and_close_to_fp32(home, folder):
    full, small = OnnxEmbedder(folder), OnnxEmbedder(folder, precision="int8")
    a, b = np.array(full.embed(SENTENCES)), np.array(small.embed(SENTENCES))
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    cosines = (a * b).sum(axis=1)
    assert cosines.min() > 0.95, cosines
    assert not np.allclose(a, b, atol=1e-4)  # really another model: the vectors moved
    queries = np.array([small.embed_query(s) for s in SENTENCES[2:]]) @ np.array([full.embed_query(s) for s in SENTENCES[2:]]).T
    assert np.diag(queries).min() > 0.95
    copy = quantize.cached_path(folder / "model.onnx")
    assert copy.parent == home / "cache" / "onnx-int8" and copy.stat().st_size < (folder / "model.onnx").stat().st_size / 2


def test_int8_runs_each_text_on_one_thread_and_texts_side_by_side(home, monkeypatch):
    """An int8 copy with no ``threads`` setting: its session has one intra-op thread (waking a pool
    for each of its many small steps cost more than it saved: onnx._lanes), each text is a call of
    its own, the calls run side by side in lanes, and so a text's vector is the same whatever else
    was embedded with it (batched, int8 quantizes a batch's activations on one scale). ``threads``
    given: the pool and batches, one lane."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0, 1}, raising=False)
    lanes = OnnxEmbedder(MODEL_DIR, precision="int8")
    assert lanes._per_text and lanes._lanes == 2 and lanes._session.get_session_options().intra_op_num_threads == 1
    pooled = OnnxEmbedder(MODEL_DIR, precision="int8", threads=2)
    assert not pooled._per_text and pooled._session.get_session_options().intra_op_num_threads == 2
    assert not OnnxEmbedder(MODEL_DIR)._per_text  # fp32's steps are large enough to share
    assert lanes.fingerprint() != pooled.fingerprint()  # caches of batched vectors are not reused
    texts = [f"{s} (note {i})" for i in range(3) for s in SENTENCES]
    seen: list[tuple[int, str]] = []
    run = lanes._run
    monkeypatch.setattr(lanes, "_run", lambda batch: (seen.append((len(batch), threading.current_thread().name)), run(batch))[1])
    together = np.array(lanes.embed(texts))
    assert [n for n, _ in seen] == [1] * len(texts)
    assert {name.startswith("graphmem-onnx") for _, name in seen} == {True}
    alone = np.array([lanes.embed_one(t) for t in texts[::-1]])[::-1]
    assert np.allclose(together, alone, atol=1e-6)
    batched = np.array(pooled.embed(texts))  # one batch: each row quantized on the batch's scale
    assert not np.allclose(batched, alone, atol=1e-4) and (batched * alone).sum(axis=1).min() > 0.98
    assert np.allclose(lanes.embed_query(SENTENCES[2]), pooled.embed_query(SENTENCES[2]), atol=1e-5)
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: {0}, raising=False)
    one_core = OnnxEmbedder(MODEL_DIR, precision="int8")  # one lane: still one text per call
    assert one_core._per_text and one_core._lanes == 1
    assert np.allclose(np.array(one_core.embed(texts)), alone, atol=1e-6)


def test_the_second_load_reads_the_cached_copy(home):
    first = OnnxEmbedder(MODEL_DIR, precision="int8")
    copy = quantize.cached_path(MODEL_DIR / "model.onnx")
    before = copy.stat()
    second = OnnxEmbedder(MODEL_DIR, precision="int8")
    after = copy.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)  # not quantized again
    assert second.embed(SENTENCES[:1]) == first.embed(SENTENCES[:1])
    assert not [p for p in copy.parent.iterdir() if p.name.startswith(".quantizing-")]  # no temp file left


def test_a_damaged_copy_is_made_again(home):
    OnnxEmbedder(MODEL_DIR, precision="int8")
    copy = quantize.cached_path(MODEL_DIR / "model.onnx")
    good = OnnxEmbedder(MODEL_DIR, precision="int8").embed(SENTENCES)
    copy.write_bytes(copy.read_bytes()[: copy.stat().st_size // 3])  # cut short, as by a full disk
    again = OnnxEmbedder(MODEL_DIR, precision="int8")
    assert copy.stat().st_size > 10_000_000
    assert np.allclose(again.embed(SENTENCES), good, atol=1e-6)


def test_a_changed_source_file_gets_its_own_copy(home, tmp_path):
    folder = tmp_path / "all-MiniLM-L6-v2-onnx"
    shutil.copytree(MODEL_DIR, folder)
    key = quantize.cached_path(folder / "model.onnx")
    os.utime(folder / "model.onnx", ns=(1, 1))
    assert quantize.cached_path(folder / "model.onnx") != key


def test_the_precision_is_part_of_the_identity(home):
    full, small = OnnxEmbedder(BGE_DIR), OnnxEmbedder(BGE_DIR, precision="int8")
    assert full.name == "onnx:bge-small-en-v1.5" and small.name == "onnx:bge-small-en-v1.5:int8"
    assert full.fingerprint() and small.fingerprint() and full.fingerprint() != small.fingerprint()
    assert (small.precision, small.pooling, small.query_instruction, small.score_floor) == ("int8", "cls", full.query_instruction, 0.43)
    assert "precision='int8'" in repr(small)


@pytest.mark.parametrize("bad", ["int4", "INT8", "", 8, None])
def test_a_bad_precision_is_a_config_error(bad):
    with pytest.raises(ConfigError, match="precision must be one of fp32, int8"):
        create_embedder("onnx", {"model_dir": str(MODEL_DIR), "precision": bad})


def test_an_unwritable_cache_is_a_config_error(tmp_path, monkeypatch):
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    monkeypatch.setenv("GRAPHMEM_HOME", str(blocked))
    with pytest.raises(ConfigError, match="cannot write the int8 model cache"):
        OnnxEmbedder(MODEL_DIR, precision="int8")


def _memory(path: Path, server: ScriptedLLMServer, precision: str) -> Memory:
    return Memory.from_config({"llm": llm_config(server),
                               "embedder": {"provider": "onnx", "config": {"model_dir": str(MODEL_DIR), "precision": precision}},
                               "graph_store": {"provider": "embedded", "config": {"path": str(path)}},
                               "history_db_path": str(path.parent / "history.db"), "warm_up": False})


def test_a_store_built_at_fp32_refuses_int8_and_keeps_its_data(home, tmp_path):
    store = tmp_path / "graph"
    with ScriptedLLMServer() as server:
        memory = _memory(store, server, "fp32")
        memory.add("I moved to Denver in March.", user_id="alice", infer=False)
        memory.close()
        with pytest.raises(ConfigError, match=r"holds fp32 embeddings, not the int8 of the configured embedder"):
            _memory(store, server, "int8")
        memory = _memory(store, server, "fp32")  # the refusal lost nothing
        assert [r["memory"] for r in memory.search("where do I live?", user_id="alice")["results"]] == ["I moved to Denver in March."]
        memory.close()


def test_an_int8_store_refuses_fp32_and_an_empty_one_takes_either(home, tmp_path):
    with ScriptedLLMServer() as server:
        memory = _memory(tmp_path / "graph", server, "int8")
        memory.add("I moved to Denver in March.", user_id="alice", infer=False)
        memory.close()
        with pytest.raises(ConfigError, match=r"holds int8 embeddings, not the fp32"):
            _memory(tmp_path / "graph", server, "fp32")
        memory = _memory(tmp_path / "graph", server, "int8")
        assert memory.search("where do I live?", user_id="alice")["results"][0]["memory"] == "I moved to Denver in March."
        memory.close()
        _memory(tmp_path / "empty", server, "int8").close()
        _memory(tmp_path / "empty", server, "fp32").close()  # nothing stored yet: no vectors to mix


def _neo4j_memory(uri: str, server: ScriptedLLMServer, tmp_path: Path, precision: str) -> Memory:
    return Memory.from_config({"llm": llm_config(server),
                               "embedder": {"provider": "onnx", "config": {"model_dir": str(MODEL_DIR), "precision": precision}},
                               "graph_store": {"provider": "neo4j", "config": {"url": uri, "warm_plans": False}},
                               "history_db_path": str(tmp_path / f"history-{precision}.db"), "warm_up": False})


@pytest.mark.neo4j
def test_a_neo4j_database_with_fp32_vectors_refuses_int8(home, neo4j_uri, raw_driver, tmp_path, uid):
    """The test database is shared: it holds vectors from the other tests, made at fp32 with no record."""
    raw_driver.execute_query("MATCH (r:EmbedderRecord) DELETE r")
    with ScriptedLLMServer() as server:
        memory = _neo4j_memory(neo4j_uri, server, tmp_path, "fp32")
        memory.add("I moved to Denver in March.", user_id=uid, infer=False)
        memory.close()
        with pytest.raises(ConfigError, match=r"holds fp32 embeddings, not the int8 of the configured embedder"):
            _neo4j_memory(neo4j_uri, server, tmp_path, "int8")
        assert not raw_driver.execute_query("MATCH (r:EmbedderRecord) RETURN r").records  # the refusal wrote nothing
        memory = _neo4j_memory(neo4j_uri, server, tmp_path, "fp32")
        assert memory.search("where do I live?", user_id=uid)["results"][0]["memory"] == "I moved to Denver in March."
        memory.delete_all(user_id=uid)
        memory.close()


@pytest.mark.neo4j
def test_a_neo4j_database_recorded_at_int8_refuses_fp32(home, neo4j_uri, raw_driver, tmp_path, uid):
    with ScriptedLLMServer() as server:
        memory = _neo4j_memory(neo4j_uri, server, tmp_path, "fp32")
        memory.add("I moved to Denver in March.", user_id=uid, infer=False)  # the database holds vectors
        raw_driver.execute_query("MERGE (r:EmbedderRecord {key: 'embedder'}) SET r.precision = 'int8'")
        try:
            with pytest.raises(ConfigError, match=r"holds int8 embeddings, not the fp32"):
                _neo4j_memory(neo4j_uri, server, tmp_path, "fp32")
            _neo4j_memory(neo4j_uri, server, tmp_path, "int8").close()  # the recorded precision opens
        finally:
            raw_driver.execute_query("MATCH (r:EmbedderRecord) DELETE r")
            memory.delete_all(user_id=uid)
            memory.close()
