"""The probes' centre kept on disk (retrieval.hubness): a new process's first search reads it under the
embedder's fingerprint instead of embedding the 32 probes; another fingerprint, a damaged file or a
cache that cannot be written never changes what search returns."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from conftest import ALLOW_SKIP, MODEL_DIR  # ../shared beside the checkout, or GRAPHMEM_TEST_MODEL_DIR

from graphmem.embeddings import HashingEmbedder
from graphmem.retrieval.hubness import PROBES, cache_path, mean, query_vectors


class Fingerprinted(HashingEmbedder):
    """A hashing model that names its weights, as a local model does."""

    def __init__(self, dims: int, weights: str) -> None:
        super().__init__(dims)
        self.weights = weights

    def fingerprint(self) -> str | None:
        return f"fingerprinted|{self.weights}|{self.dims}"


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("GRAPHMEM_HOME", str(tmp_path))
    return tmp_path


def test_a_new_embedder_with_the_same_fingerprint_reads_the_centre_and_embeds_only_the_query(home):
    first = Fingerprinted(64, "v1")
    _, centre = query_vectors(first, "where do I live?")
    assert first.calls == 1
    path = cache_path(first)
    assert path is not None and path.is_file() and path.parent == home / "cache" / "hubness"

    later = Fingerprinted(64, "v1")  # a new process's embedder: nothing in memory
    vector, kept = query_vectors(later, "where do I live?")
    assert later.calls == 1  # the query alone: no probes in the batch
    assert kept == centre  # the same floats: rankings do not depend on where the centre came from
    assert vector == pytest.approx(later.embed_query("where do I live?"))


def test_other_weights_or_other_probes_get_their_own_file(home, monkeypatch):
    a, b = Fingerprinted(64, "v1"), Fingerprinted(64, "v2")
    assert cache_path(a) != cache_path(b)
    query_vectors(a, "x")
    assert not cache_path(b).exists()  # type: ignore[union-attr]
    before = cache_path(a)
    monkeypatch.setattr("graphmem.retrieval.hubness.PROBES", (*PROBES, "what else?"))
    assert cache_path(a) != before  # a changed probe list never reads an old centre


def test_no_fingerprint_no_file(home):
    plain = HashingEmbedder(64)
    assert cache_path(plain) is None
    query_vectors(plain, "where do I live?")
    assert not (home / "cache").exists()


@pytest.mark.parametrize("damage", ["not json", json.dumps({"centre": [1.0, 2.0]}), json.dumps({"centre": ["a"] * 64}), json.dumps([1])])
def test_a_damaged_or_foreign_file_is_recomputed_and_written_over(home, damage):
    emb = Fingerprinted(64, "v1")
    path = cache_path(emb)
    assert path is not None
    path.parent.mkdir(parents=True)
    path.write_text(damage, encoding="utf-8")
    _, centre = query_vectors(emb, "where do I live?")
    assert centre == pytest.approx(mean(emb.embed_queries(list(PROBES))))
    assert json.loads(path.read_text(encoding="utf-8"))["centre"] == centre


def test_a_cache_that_cannot_be_written_changes_nothing(tmp_path, monkeypatch):
    blocked = tmp_path / "home"
    blocked.write_text("a file where the folder would be", encoding="utf-8")
    monkeypatch.setenv("GRAPHMEM_HOME", str(blocked))
    emb = Fingerprinted(64, "v1")
    vector, centre = query_vectors(emb, "where do I live?")
    assert emb.calls == 1 and len(centre) == 64 and len(vector) == 64
    assert not list(tmp_path.glob("**/*.tmp"))


def test_a_failing_fingerprint_costs_the_cache_not_the_search(home):
    class Broken(HashingEmbedder):
        def fingerprint(self) -> str | None:
            raise RuntimeError("boom")

    emb = Broken(64)
    assert cache_path(emb) is None
    assert len(query_vectors(emb, "x")[1]) == 64


def test_an_onnx_models_fingerprint_follows_its_files_and_settings(tmp_path):
    from graphmem.embeddings.onnx import OnnxEmbedder

    if not (MODEL_DIR / "model.onnx").is_file():
        message = f"MiniLM ONNX model not found at {MODEL_DIR}"
        if ALLOW_SKIP:
            pytest.skip(message)
        pytest.fail(message + " (set GRAPHMEM_ALLOW_SKIP=1 to skip)")

    folder = tmp_path / "model"
    folder.mkdir()
    for name in os.listdir(MODEL_DIR):
        source = MODEL_DIR / name
        if source.is_file():
            target = folder / name
            if name == "model.onnx":
                target.symlink_to(source)  # the weights are read where they are, never changed
            else:
                shutil.copy(source, target)
    emb = OnnxEmbedder(model_dir=folder)
    same = OnnxEmbedder(model_dir=folder)
    assert emb.fingerprint() is not None and emb.fingerprint() == same.fingerprint()
    assert OnnxEmbedder(model_dir=folder, query_instruction="query: ").fingerprint() != emb.fingerprint()
    assert OnnxEmbedder(model_dir=folder, max_length=128).fingerprint() != emb.fingerprint()
    loaded = emb.fingerprint()
    stat = (folder / "tokenizer.json").stat()
    os.utime(folder / "tokenizer.json", ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))  # a replaced file
    assert OnnxEmbedder(model_dir=folder).fingerprint() != loaded
    assert emb.fingerprint() == loaded  # a loaded model keeps naming the files it read
