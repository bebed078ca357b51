"""Tests for graphmem.embeddings: hashing, the real MiniLM ONNX model, and OpenAI over a local stub."""

from __future__ import annotations

import hashlib
import json
import math
import os
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest
from conftest import MODEL_DIR  # noqa: E402  (../shared beside the checkout, or GRAPHMEM_TEST_MODEL_DIR)

from graphmem.embeddings import (
    Embedder,
    HashingEmbedder,
    OnnxEmbedder,
    OpenAIEmbedder,
    create_embedder,
)
from graphmem.errors import ConfigError, EmbeddingError, GraphMemError


def cos(a, b) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def assert_unit(vectors, dims: int) -> None:
    for vec in vectors:
        assert isinstance(vec, list) and len(vec) == dims
        assert all(isinstance(x, float) for x in vec)
        assert math.isclose(math.sqrt(sum(x * x for x in vec)), 1.0, abs_tol=1e-6)


# ---------------------------------------------------------------------------------- hashing


def test_hashing_is_deterministic_across_instances():
    texts = ["Desmond plays badminton", "Ünïcödé straße 東京", ""]
    a = HashingEmbedder().embed(texts)
    b = HashingEmbedder().embed(texts)
    assert a == b
    assert HashingEmbedder().name == "hashing-256"
    assert HashingEmbedder(dims=64).dims == 64


def test_hashing_known_vector_is_stable():
    # blake2b-based: pinned so a change of hashing scheme (or use of salted hash()) is noticed.
    vec = HashingEmbedder(dims=16).embed_one("hello")
    a, b = 0.2773500981126146, 0.5547001962252291  # 1/sqrt(13), 2/sqrt(13)
    expected = [0.0] * 4 + [a, -b, 0.0, b] + [0.0] * 7 + [-b]
    assert vec == pytest.approx(expected, abs=1e-12)


def test_hashing_unit_norm_and_dims():
    emb = HashingEmbedder(dims=128)
    vectors = emb.embed(["one", "two words", "a much longer sentence with many words in it", "!!!"])
    assert_unit(vectors, 128)


def test_hashing_similar_beats_unrelated():
    emb = HashingEmbedder()
    e = emb.embed_one
    assert cos(e("Desmond"), e("desmond")) > 0.99
    assert cos(e("play badminton"), e("plays badminton")) > 0.6
    assert cos(e("play badminton"), e("plays badminton")) > cos(e("play badminton"), e("My sister lives in Paris")) + 0.4
    assert abs(cos(e("I love hiking in the mountains"), e("Quarterly revenue grew"))) < 0.3


def test_hashing_empty_string_is_safe():
    emb = HashingEmbedder(dims=32)
    empty = emb.embed_one("")
    assert_unit([empty], 32)
    assert empty == emb.embed_one("   ") == emb.embed_one("?!")  # no word tokens -> same fixed vector
    other = emb.embed_one("something")
    assert not math.isnan(cos(empty, other))


def test_calls_counts_batches_not_texts():
    emb = HashingEmbedder()
    assert emb.calls == 0
    emb.embed(["a", "b", "c"])
    assert emb.calls == 1
    emb.embed_one("d")
    assert emb.calls == 2
    assert emb.embed([]) == []
    assert emb.calls == 2


def test_embed_rejects_a_bare_string_and_non_strings():
    emb = HashingEmbedder()
    with pytest.raises(GraphMemError):
        emb.embed("not a list")
    with pytest.raises(GraphMemError):
        emb.embed(["ok", 3])  # type: ignore[list-item]
    assert emb.calls == 0


def test_unexpected_failures_become_embedding_error():
    class Broken(Embedder):
        dims = 4
        name = "broken"

        def _embed(self, texts):
            raise RuntimeError("boom")

    class WrongSize(Embedder):
        dims = 4
        name = "wrong"

        def _embed(self, texts):
            return [[1.0, 2.0] for _ in texts]

    with pytest.raises(EmbeddingError) as info:
        Broken().embed(["x"])
    assert isinstance(info.value.__cause__, RuntimeError)
    with pytest.raises(EmbeddingError, match="length 4"):
        WrongSize().embed(["x"])


def test_hashing_bad_dims():
    with pytest.raises(ConfigError):
        HashingEmbedder(dims=0)


def test_create_embedder():
    emb = create_embedder("hashing", {"dims": 64})
    assert isinstance(emb, HashingEmbedder) and emb.dims == 64
    assert isinstance(create_embedder("Hashing", {}), HashingEmbedder)
    with pytest.raises(ConfigError) as info:
        create_embedder("word2vec", {})
    for name in ("hashing", "onnx", "openai"):
        assert name in str(info.value)
    with pytest.raises(ConfigError, match="dimz"):
        create_embedder("hashing", {"dimz": 3})
    with pytest.raises(ConfigError, match="model_dir"):
        create_embedder("onnx", {})


# ---------------------------------------------------------------------------------- ONNX


@pytest.fixture(scope="module")
def minilm() -> OnnxEmbedder:
    if not (MODEL_DIR / "model.onnx").is_file():
        message = f"MiniLM ONNX model not found at {MODEL_DIR}"
        if os.environ.get("GRAPHMEM_ALLOW_SKIP") == "1":
            pytest.skip(message)
        pytest.fail(message + " (set GRAPHMEM_ALLOW_SKIP=1 to skip)")
    return OnnxEmbedder(MODEL_DIR, threads=2)


def test_onnx_dims_name_and_unit_norm(minilm):
    assert minilm.dims == 384
    assert minilm.name == "onnx:all-MiniLM-L6-v2"
    assert_unit(minilm.embed(["hello world", "", "x" * 5000]), 384)  # empty and over-long inputs


def test_onnx_semantic_ordering(minilm):
    q, sports, paris = minilm.embed(
        ["Which sports does the user play?", "I play tennis every weekend", "My sister lives in Paris"]
    )
    assert np.dot(q, sports) > np.dot(q, paris) + 0.15


def test_onnx_batch_equals_one_by_one(minilm):
    texts = [
        "I play tennis every weekend",
        "short",
        "My sister lives in Paris and works as an architect at a large firm",
        "Desmond prefers green tea over coffee",
    ]
    small = OnnxEmbedder(MODEL_DIR, batch_size=3, threads=2)  # crosses a batch boundary
    batch = np.asarray(small.embed(texts))
    single = np.asarray([minilm.embed_one(t) for t in texts])
    assert np.allclose(batch, single, atol=1e-5)
    assert small.calls == 1


def test_onnx_threads_sleep_between_steps_and_one_query_tokenises_as_a_batch(minilm):
    """The session's idle threads block instead of spinning (a loaded 2-core machine: see
    onnx._open_session); one text is tokenised on its own (encode) with the batch's truncation, so
    an over-long query is cut at max_length and embeds as it does inside a batch."""
    options = minilm._session.get_session_options()
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"
    long_query = "why does the deploy leave the redis cache cold " * 60  # far over 256 tokens
    for text in ("short", "Which sports does the user play?", long_query):
        alone = np.asarray(minilm.embed_query(text))
        in_batch = np.asarray(minilm.embed_queries([text, text]))
        assert np.allclose(alone, in_batch[0], atol=1e-5) and np.allclose(alone, in_batch[1], atol=1e-5)
    assert len(minilm._tokenizer.encode(long_query).ids) == minilm.max_length


def test_onnx_missing_dir_is_config_error(tmp_path):
    missing = tmp_path / "no-such-model"
    with pytest.raises(ConfigError, match="no-such-model"):
        OnnxEmbedder(missing)
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="model.onnx"):
        OnnxEmbedder(tmp_path / "empty")
    with pytest.raises(ConfigError, match="no-such-model"):
        create_embedder("onnx", {"model_dir": str(missing)})


# ---------------------------------------------------------------------------------- OpenAI

SECRET = "sk-test-SECRET-0123456789"


def _fake_vector(text: str, dims: int) -> list[float]:
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return [float(1 + digest[i % len(digest)]) for i in range(dims)]  # deliberately not unit length


class _Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):  # keep test output quiet
        pass

    def do_POST(self):
        length = int(self.headers.get("Content-Length", 0))
        body = json.loads(self.rfile.read(length) or b"{}")
        self.server.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
        if self.path != "/v1/embeddings":
            return self._send(404, {"error": {"message": "not found"}})
        if self.headers.get("Authorization") != f"Bearer {SECRET}":
            return self._send(401, {"error": {"message": "bad key", "type": "invalid_request_error"}})
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        if any(not t for t in inputs):
            return self._send(400, {"error": {"message": "empty input"}})
        dims = body.get("dimensions") or 8
        data = [
            {"object": "embedding", "index": i, "embedding": _fake_vector(t, dims)} for i, t in enumerate(inputs)
        ]
        data.reverse()  # the client must order by index
        self._send(200, {"object": "list", "data": data, "model": body["model"], "usage": {"prompt_tokens": 1, "total_tokens": 1}})

    def _send(self, status, payload):
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)


@pytest.fixture(scope="module")
def stub_server():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.requests = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server, f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_openai_known_model_dims_and_normalisation(stub_server):
    server, url = stub_server
    emb = OpenAIEmbedder(model="text-embedding-3-small", api_key=SECRET, base_url=url, dims=16, max_retries=0)
    assert emb.dims == 16 and emb.name == "openai:text-embedding-3-small"
    texts = ["alpha", "beta", "gamma"]
    vectors = emb.embed(texts)
    assert_unit(vectors, 16)
    for text, vec in zip(texts, vectors, strict=False):  # order restored from the reversed response
        expected = np.asarray(_fake_vector(text, 16))
        assert np.allclose(vec, expected / np.linalg.norm(expected))
    request = server.requests[-1]
    assert request["body"]["dimensions"] == 16 and request["body"]["input"] == texts
    assert emb.calls == 1
    assert OpenAIEmbedder(api_key=SECRET, base_url=url).dims == 1536  # known default, no request


def test_openai_unknown_model_learns_dims_from_first_response(stub_server):
    _, url = stub_server
    emb = OpenAIEmbedder(model="local-embedder", api_key=SECRET, base_url=url, max_retries=0)
    vectors = emb.embed(["one", "", "two"])  # the empty text is not sent (the API rejects it)
    assert emb.dims == 8
    assert_unit(vectors, 8)


def test_openai_repr_and_errors_hide_key(stub_server, monkeypatch):
    _, url = stub_server
    emb = OpenAIEmbedder(api_key=SECRET, base_url=url, dims=8, max_retries=0)
    assert SECRET not in repr(emb) and SECRET not in str(emb)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-wrong-key-from-env")
    bad = OpenAIEmbedder(base_url=url, dims=8, max_retries=0)
    with pytest.raises(EmbeddingError, match="401") as info:
        bad.embed(["x"])
    assert "sk-wrong-key-from-env" not in str(info.value) and "sk-wrong-key-from-env" not in repr(bad)


def test_openai_missing_key_is_config_error_on_first_use(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    emb = OpenAIEmbedder()  # building needs no key: a read-only Memory never embeds
    assert emb.dims == 1536
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        emb.embed(["x"])


def test_openai_connection_refused_names_url():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    emb = create_embedder("openai", {"api_key": SECRET, "base_url": url, "dims": 8, "max_retries": 0, "timeout": 5})
    with pytest.raises(EmbeddingError) as info:
        emb.embed(["hello"])
    assert f"127.0.0.1:{port}" in str(info.value)
    assert SECRET not in str(info.value)
    assert info.value.__cause__ is not None
