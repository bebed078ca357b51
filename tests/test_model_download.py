"""The local embedder by name (issue 22): downloaded once through huggingface_hub from HF_ENDPOINT
(a local server answering as the hub does: tests/hub_server.py) into the cache (HF_HOME honoured,
else $GRAPHMEM_HOME/models), then read from the cache with no request; model_dir still works."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import MODEL_DIR
from hub_server import COMMIT, HubServer

from graphmem.embeddings import create_embedder
from graphmem.embeddings.hub import cache_dir
from graphmem.errors import ConfigError

REPO = "sentence-transformers/all-MiniLM-L6-v2"
ONNX = {"provider": "onnx", "config": {"model": REPO}}

pytestmark = pytest.mark.skipif(not (MODEL_DIR / "model.onnx").is_file(), reason=f"the shared model is not at {MODEL_DIR}")


@pytest.fixture
def hub(monkeypatch, tmp_path):
    files = {"onnx/model.onnx": MODEL_DIR / "model.onnx", "tokenizer.json": MODEL_DIR / "tokenizer.json",
             "config.json": MODEL_DIR / "config.json", "1_Pooling/config.json": MODEL_DIR / "pooling_config.json"}
    for var in ("HF_HOME", "HF_HUB_CACHE", "HF_HUB_OFFLINE"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GRAPHMEM_HOME", str(tmp_path / "home"))
    with HubServer(REPO, files, lfs={"onnx/model.onnx"}) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
        yield server


def test_the_model_is_downloaded_once_into_graphmems_cache(hub, tmp_path):
    embedder = create_embedder(ONNX["provider"], ONNX["config"])
    assert embedder.dims == 384 and embedder.name == "onnx:all-MiniLM-L6-v2"
    snapshot = tmp_path / "home" / "models" / "models--sentence-transformers--all-MiniLM-L6-v2" / "snapshots" / COMMIT
    assert (snapshot / "onnx" / "model.onnx").stat().st_size == (MODEL_DIR / "model.onnx").stat().st_size
    assert any(p.startswith("/cdn/") for p in hub.gets())  # the LFS file came through the redirect

    local = create_embedder("onnx", {"model_dir": str(MODEL_DIR)})  # model_dir still works, and agrees
    texts = ["I moved to Denver", "the cat sleeps"]
    assert np.allclose(embedder.embed(texts), local.embed(texts), atol=1e-5)

    before = len(hub.requests)
    again = create_embedder(ONNX["provider"], ONNX["config"])  # from the cache: no request at all
    assert len(hub.requests) == before and again.embed(texts) == embedder.embed(texts)


def test_hf_home_is_honoured(hub, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    assert cache_dir() == tmp_path / "hf" / "hub"
    create_embedder("onnx", {"model": REPO})
    assert (tmp_path / "hf" / "hub" / "models--sentence-transformers--all-MiniLM-L6-v2" / "snapshots" / COMMIT / "tokenizer.json").is_file()
    assert not (tmp_path / "home" / "models").exists()


def test_unknown_models_and_unreachable_hubs_are_clear_config_errors(hub, monkeypatch):
    with pytest.raises(ConfigError, match="cannot download onnx/model.onnx of the model 'nobody/nothing'"):
        create_embedder("onnx", {"model": "nobody/nothing"})
    with pytest.raises(ConfigError, match="repository name"):
        create_embedder("onnx", {"model": "all-MiniLM-L6-v2"})
    with pytest.raises(ConfigError, match="not both"):
        create_embedder("onnx", {"model": REPO, "model_dir": str(MODEL_DIR)})
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens there
    with pytest.raises(ConfigError, match="HF_ENDPOINT"):
        create_embedder("onnx", {"model": REPO, "revision": "v9"})
