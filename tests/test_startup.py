"""Start-up: importing is cheap and side-effect free, reading needs no LLM key, the LLM is found
from the environment by every entry point. (Import *time* is measured by benchmarks/cost/import_cost.py;
tests only check what is imported.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import graph, llm_config, script

from graphmem import ConfigError, Memory
from graphmem.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
HEAVY = ("openai", "neo4j", "networkx", "tenacity", "graphmem.lifecycle.export", "graphmem.browser.browse")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", f"{code}\nimport sys; print('\\n'.join(sys.modules))"],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    return set(out.stdout.split())


def test_import_graphmem_loads_no_sdk_driver_or_exporter():
    loaded = _modules_after("import graphmem")
    assert not loaded & set(HEAVY), loaded & set(HEAVY)


def test_memory_class_and_cli_parser_load_no_sdk_or_driver():
    loaded = _modules_after("from graphmem import Memory\nfrom graphmem.cli.main import build_parser\nbuild_parser()")
    assert not loaded & {"openai", "neo4j", "graphmem.lifecycle.export", "graphmem.browser.browse"}


def test_cli_help_loads_only_the_parser():
    """``graphmem --help`` builds every subcommand's parser: none may load a library on the way."""
    loaded = _modules_after("from graphmem.cli.main import build_parser\nbuild_parser()")
    heavy = {m for m in loaded if m.split(".")[0] in {"openai", "neo4j", "pydantic", "numpy", "networkx", "tenacity",
                                                      "fastapi", "starlette", "uvicorn", "mcp", "langgraph", "langchain_core"}}
    assert not heavy, sorted(heavy)


def _env_without_llm(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "GRAPHMEM_LLM_", "GRAPHMEM_CONFIG"))}
    return {**env, "GRAPHMEM_HOME": str(tmp_path / "home")}


def test_default_memory_and_read_commands_need_no_llm_key(tmp_path):
    env = _env_without_llm(tmp_path)
    code = ("from graphmem import Memory\n"
            "with Memory() as m:\n"
            "    print(m.get_all(user_id='ann'), m.history('nope'), type(m.store).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "{'results': [], 'relations': []} [] EmbeddedStore" in out.stdout
    assert (tmp_path / "home").is_dir()  # the default store went under GRAPHMEM_HOME


@pytest.fixture
def keyless_config(tmp_path, monkeypatch) -> str:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "GRAPHMEM_LLM_BASE_URL", "GRAPHMEM_LLM_MODEL", "GRAPHMEM_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    path = tmp_path / "config.json"
    path.write_text(json.dumps({
        "embedder": {"provider": "hashing", "config": {"dims": 64}},
        "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "graph")}},
        "history_db_path": str(tmp_path / "history.db"),
    }))
    return str(path)


def test_cli_read_commands_work_without_an_llm_key(keyless_config, server, capsys):
    writer = {**json.loads(Path(keyless_config).read_text()), "llm": llm_config(server)}
    script(server, graph([("Boston", "place")], [("I", "lives_in", "Boston")]))
    server.enqueue("extract_facts", {"facts": ["Lives in Boston"]})
    with Memory(writer) as m:
        memory_id = m.add("I live in Boston", user_id="ann")["results"][0]["id"]
    for argv in (["get-all", "--user", "ann", "--json"], ["search", "Boston", "--user", "ann", "--json"],
                 ["timeline", "me", "--user", "ann"], ["history", memory_id],
                 ["export", "--user", "ann", "--format", "json"]):
        assert main([*argv, "--config", keyless_config]) == 0, argv
        out = capsys.readouterr().out
        assert "Boston" in out or argv[0] == "timeline", argv
    # an add that needs the LLM says what is missing, on first use
    assert main(["add", "I moved to Denver", "--user", "ann", "--config", keyless_config]) == 1
    err = capsys.readouterr().err
    assert err.startswith("graphmem: error:") and "OPENAI_API_KEY" in err


def test_llm_base_url_and_model_from_the_environment_reach_every_command(keyless_config, server, capsys, monkeypatch):
    monkeypatch.setenv("GRAPHMEM_LLM_BASE_URL", server.base_url)
    monkeypatch.setenv("GRAPHMEM_LLM_MODEL", "env-model")
    script(server, graph([("Boston", "place")], [("I", "lives_in", "Boston")]))
    server.enqueue("extract_facts", {"facts": ["Lives in Boston"]})
    assert main(["add", "I live in Boston", "--user", "ann", "--config", keyless_config]) == 0
    assert "LIVES_IN" in capsys.readouterr().out
    assert server.requests and {r.model for r in server.requests} == {"env-model"}


def test_config_names_win_over_the_environment(monkeypatch):
    from graphmem.config import MemoryConfig

    monkeypatch.setenv("GRAPHMEM_LLM_BASE_URL", "http://env.invalid/v1")
    monkeypatch.setenv("GRAPHMEM_LLM_MODEL", "env-model")
    cfg = MemoryConfig.load({"llm": {"provider": "openai", "config": {"model": "m", "base_url": "http://cfg.invalid/v1"}}})
    assert (cfg.llm.config.model, cfg.llm.config.base_url) == ("m", "http://cfg.invalid/v1")
    assert MemoryConfig.load(None).llm.config.model == "env-model"


def test_missing_key_is_a_config_error_only_when_the_llm_is_used(keyless_config):
    with Memory(json.loads(Path(keyless_config).read_text())) as m:
        with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
            m.add("I live in Boston", user_id="ann")
        assert m.get_all(user_id="ann") == {"results": [], "relations": []}  # nothing half-written


def test_memory_builds_its_model_clients_ahead_and_sends_nothing(tmp_path):
    """The SDK import, the clients and dateparser's data are loaded on a background thread after
    set-up, so the first add does not pay for them; no request is sent for it."""
    from graphmem.embeddings.openai import OpenAIEmbedder
    from graphmem.stores.embedded import EmbeddedStore
    from graphmem.testing import ScriptedLLMServer

    with ScriptedLLMServer() as server:
        embedder = OpenAIEmbedder(model="text-embedding-3-small", api_key="k", base_url=server.base_url, dims=8)
        memory = Memory({"llm": llm_config(server), "history_db_path": str(tmp_path / "h.db")},
                        store=EmbeddedStore(tmp_path / "store", embedding_dims=8), embedder=embedder)
        try:
            memory._preparing.join(60)
            assert not memory._preparing.is_alive()
            assert memory.llm._built is not None and embedder._built is not None
            assert server.requests == [] and server.embedding_calls == 0
        finally:
            memory.close()


def test_preparing_without_a_key_leaves_the_error_to_the_first_request(tmp_path, monkeypatch):
    from graphmem.stores.embedded import EmbeddedStore

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = {"llm": {"provider": "openai", "config": {"model": "gpt-4o-mini"}}, "history_db_path": str(tmp_path / "h.db")}
    from graphmem.embeddings import HashingEmbedder

    memory = Memory(config, store=EmbeddedStore(tmp_path / "store", embedding_dims=8), embedder=HashingEmbedder(dims=8))
    try:
        memory._preparing.join(60)
        assert memory.llm._built is None
        with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
            memory.add("I moved to Denver", user_id="ann")
    finally:
        memory.close()


def test_neo4j_warming_is_a_config_key_and_refuses_a_non_boolean():
    from graphmem.config import GraphStoreConfig
    from graphmem.factory import build_store

    store = build_store(GraphStoreConfig(provider="neo4j", config={"warm_plans": False}), 8)
    try:
        assert store.warm_plans is False  # nothing connects or plans before setup()
    finally:
        store.close()
    default = build_store(GraphStoreConfig(provider="neo4j", config={}), 8)
    assert default.warm_plans is True
    default.close()
    with pytest.raises(ConfigError, match="warm_plans"):
        GraphStoreConfig(provider="neo4j", config={"warm_plans": "sometimes"}).settings()


def test_a_custom_model_whose_prepare_raises_leaves_the_memory_working(tmp_path, capfd):
    from graphmem.embeddings import HashingEmbedder
    from graphmem.stores.embedded import EmbeddedStore

    class Failing(HashingEmbedder):
        def prepare(self) -> None:
            raise RuntimeError("no preparing here")

    memory = Memory({"llm": {"provider": "openai", "config": {"model": "gpt-4o-mini", "api_key": "k"}},
                     "history_db_path": str(tmp_path / "h.db")},
                    store=EmbeddedStore(tmp_path / "store", embedding_dims=8), embedder=Failing(dims=8))
    try:
        memory._preparing.join(60)
        assert "no preparing here" not in capfd.readouterr().err  # no thread traceback on stderr
        memory.add("I moved to Denver", user_id="ann", infer=False)
        assert [m["memory"] for m in memory.get_all(user_id="ann")["results"]] == ["I moved to Denver"]
    finally:
        memory.close()


#: what a short-lived process must not load unless it uses it (docs/benchmarks.md, cold processes)
NOT_UNTIL_USED = ("numpy", "onnxruntime", "fastapi", "dateparser", "openai", "neo4j", "networkx", "tenacity")


def test_the_facade_and_the_cli_load_no_model_runtime_web_stack_or_driver():
    loaded = _modules_after("import graphmem\nfrom graphmem import Memory, AsyncMemory, MemoryConfig\n"
                            "from graphmem.embeddings import Embedder\nimport graphmem.cli.main")
    assert not {m.split(".")[0] for m in loaded} & set(NOT_UNTIL_USED), sorted(loaded & set(NOT_UNTIL_USED))


@pytest.mark.neo4j
def test_cli_commands_on_neo4j_load_and_start_only_what_they_use(neo4j_uri, tmp_path):
    """A one-shot CLI add --no-infer and search on Neo4j with the hashing embedder: no model client,
    time parser, web stack or model runtime is loaded, and no warming or preparing thread started
    (each would cost a short-lived process more than its command)."""
    from conftest import TEST_DIMS

    config = tmp_path / "neo4j.json"
    config.write_text(json.dumps({"embedder": {"provider": "hashing", "config": {"dims": TEST_DIMS}},
                                  "graph_store": {"provider": "neo4j", "config": {"url": neo4j_uri}},
                                  "history_db_path": str(tmp_path / "history.db")}))
    user = f"cold-{os.getpid()}-{tmp_path.name}"
    code = (
        "import sys, threading\n"
        "from graphmem.cli.main import main\n"
        f"args = ['--user', {user!r}, '--config', {str(config)!r}]\n"
        "assert main(['add', 'I live in Boston with Ana', '--no-infer', *args]) == 0\n"
        "assert main(['search', 'where do I live', *args]) == 0\n"
        "assert main(['delete-all', '--yes', *args]) == 0\n"
        "from graphmem.stores.neo4j import warm\n"
        "print('WARMED', len(warm.WARMED), sorted(t.name for t in threading.enumerate() if t.name.startswith('graphmem')))\n"
        "print('LOADED', ' '.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "I live in Boston with Ana" in out.stdout
    assert "WARMED 0 []" in out.stdout
    loaded = set(out.stdout.split("LOADED", 1)[1].split())
    assert "neo4j" in loaded and "numpy" in loaded  # the driver and the hashing embedder's arrays: used
    assert not loaded & {"openai", "dateparser", "tenacity", "fastapi", "onnxruntime", "networkx"}, loaded
