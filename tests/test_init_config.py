"""`graphmem init` (issue 22): a commented config file per profile that every command then finds
(--config, $GRAPHMEM_CONFIG, ./graphmem.json, $GRAPHMEM_HOME/config.json, in that order), and the
offline first run: init, an add with extraction against the fake model, search, with no key."""

from __future__ import annotations

import json

import pytest
from conftest import MODEL_DIR

from graphmem.cli.init_config import PROFILES, find_config, read_config, render
from graphmem.cli.main import main
from graphmem.config import MemoryConfig
from graphmem.testing import FakeModel


@pytest.fixture
def newcomer(tmp_path, monkeypatch):
    """A fresh folder and home, no key, no configured model."""
    for var in ("GRAPHMEM_CONFIG", "OPENAI_API_KEY", "GRAPHMEM_LLM_BASE_URL", "GRAPHMEM_BASE_URL"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GRAPHMEM_HOME", str(tmp_path / "home"))
    work = tmp_path / "project"
    work.mkdir()
    monkeypatch.chdir(work)
    return work


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_is_commented_json_that_loads(profile, tmp_path):
    text = render(profile, tmp_path)
    assert text.startswith("// graphmem configuration") and sum(line.lstrip().startswith("//") for line in text.splitlines()) >= 5
    path = tmp_path / "c.json"
    path.write_text(text)
    config = MemoryConfig.load(read_config(path))
    assert config.graph_store.provider == "embedded" and str(config.history_db_path) == str(tmp_path / "history.db")
    expected = {"offline": ("openai_compatible", "hashing"), "download": ("openai_compatible", "onnx"), "openai": ("openai", "openai"),
                "ollama": ("ollama", "openai")}[profile]
    assert (config.llm.provider, config.embedder.provider) == expected
    # one folder per embedder, the one an unset path defaults to for that embedder (home.py)
    folder = {"offline": "graph-hashing-256", "download": "graph-onnx-bge-small-en-v1.5-int8", "openai": "graph",
              "ollama": "graph-openai-nomic-embed-text-768"}[profile]
    assert config.graph_store.config == {"path": str(tmp_path / folder)}
    if profile == "download":
        assert config.embedder.config == {"model": "BAAI/bge-small-en-v1.5", "precision": "int8"}  # the recommended model


def test_the_first_run_offline(newcomer, capsys):
    with FakeModel() as fake:
        fake.when("I moved to Denver", facts=["Lives in Denver"], entities=[("I", "person"), ("Denver", "city")],
                  relations=[("I", "lives_in", "Denver")])
        assert main(["init", "--profile", "download", "--model-dir", str(MODEL_DIR), "--llm-base-url", fake.base_url]) == 0
        assert f"wrote {newcomer / 'graphmem.json'} (profile download)" in capsys.readouterr().out
        assert main(["add", "I moved to Denver", "--user", "alice"]) == 0  # no --config: ./graphmem.json is found
        assert "alice -[LIVES_IN]-> Denver" in capsys.readouterr().out
        assert main(["search", "where do I live?", "--user", "alice"]) == 0
        out = capsys.readouterr().out
        assert "Lives in Denver" in out and "alice -[LIVES_IN]-> Denver" in out
        assert main(["init"]) == 2  # never overwrites without --force
        assert "exists; pass --force" in capsys.readouterr().err


def test_where_commands_find_their_config(newcomer, tmp_path, monkeypatch):
    assert find_config(None) is None
    home_config = tmp_path / "home" / "config.json"
    assert main(["init", "--global", "--profile", "openai"]) == 0
    assert find_config(None) == home_config
    local = newcomer / "graphmem.json"
    local.write_text(render("offline", tmp_path))
    assert find_config(None) == local  # the folder's file before the home one
    named = tmp_path / "named.json"
    named.write_text(json.dumps({}))
    monkeypatch.setenv("GRAPHMEM_CONFIG", str(named))
    assert find_config(None) == named
    explicit = tmp_path / "explicit.json"
    assert find_config(explicit) == explicit  # --config wins


def test_a_broken_config_file_is_a_clear_error(newcomer, capsys):
    (newcomer / "graphmem.json").write_text("{ // not a whole-line comment\n}")
    assert main(["get-all", "--user", "a"]) == 1
    assert "cannot read config" in capsys.readouterr().err
