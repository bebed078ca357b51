"""mem0 1.0 code and configs run unchanged: the quickstart with only the import line changed, config
aliases, ignored keys warned once, unsupported providers refused by name (scripted LLM over HTTP)."""

from __future__ import annotations

import logging

import pytest
from conftest import TEST_DIMS

from graphmem import ConfigError, Memory
from graphmem.compat import mem0_config as mem0_compat
from graphmem.config import MemoryConfig

MOVIES = [
    {"role": "user", "content": "I'm planning to watch a movie tonight. Any recommendations?"},
    {"role": "assistant", "content": "How about thriller movies? They can be quite engaging."},
    {"role": "user", "content": "I'm not a big fan of thriller movies but I love sci-fi movies."},
    {"role": "assistant", "content": "Got it! I'll avoid thriller recommendations and suggest sci-fi movies in the future."},
]


def mem0_config(server, tmp_path, graph_store: dict) -> dict:
    """A config as a mem0 1.0 user writes it (its keys, its aliases, its extra sections)."""
    return {
        "version": "v1.1",
        "vector_store": {"provider": "qdrant", "config": {"collection_name": "test", "embedding_model_dims": TEST_DIMS}},
        "llm": {"provider": "openai", "config": {
            "model": "scripted", "api_key": "sk-test", "openai_base_url": server.base_url, "temperature": 0.1,
            "top_p": 0.9, "max_tokens": 1500,
        }},  # fmt: skip
        "embedder": {"provider": "hashing", "config": {"embedding_dims": TEST_DIMS}},
        "graph_store": graph_store,
        "history_db_path": str(tmp_path / "history.db"),
    }


def quickstart(Memory, config, server):  # noqa: N803 - the class is the one thing a switching user changes
    """mem0's quickstart, as written for mem0 1.0 (only the class comes from graphmem)."""
    m = Memory.from_config(config)
    result = m.add(MOVIES, user_id="alice", metadata={"category": "movies"})
    assert [r["event"] for r in result["results"]] == ["ADD", "ADD"]

    related = m.search(query="Which movies?", user_id="alice", filters={"category": "movies"})
    assert {r["memory"] for r in related["results"]} == {"Not a big fan of thriller movies", "Loves sci-fi movies"}
    by_filter = m.search("sci-fi", filters={"user_id": "alice", "category": {"in": ["movies", "books"]}}, rerank=True)
    assert by_filter["results"][0]["memory"] == "Loves sci-fi movies"
    assert m.search("sci-fi", user_id="alice", filters={"category": {"ne": "movies"}})["results"] == []

    all_memories = m.get_all(user_id="alice", filters={"category": "movies"}, limit=10)
    assert len(all_memories["results"]) == 2
    memory_id = next(r["id"] for r in all_memories["results"] if r["memory"] == "Loves sci-fi movies")
    assert m.get(memory_id)["metadata"] == {"category": "movies"}

    m.update(memory_id=memory_id, data="Loves sci-fi movies, especially space operas", metadata={"mood": "happy"})
    assert m.get(memory_id)["memory"] == "Loves sci-fi movies, especially space operas"
    assert m.get(memory_id)["metadata"] == {"category": "movies", "mood": "happy"}

    history = m.history(memory_id=memory_id)
    assert [h["event"] for h in history] == ["ADD", "UPDATE"]

    m.delete(memory_id=memory_id)
    assert m.get(memory_id) is None
    with pytest.raises(ValueError):
        m.delete(memory_id=memory_id)  # mem0 raises ValueError for an unknown id

    m.delete_all(user_id="alice")
    assert m.get_all(user_id="alice")["results"] == []
    m.reset()
    m.close()


@pytest.mark.parametrize("provider", ["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def test_the_mem0_quickstart_runs_unchanged(provider, server, tmp_path, request):
    if provider == "neo4j":
        graph_store = {"provider": "neo4j", "config": {"url": request.getfixturevalue("neo4j_uri"), "username": "neo4j",
                                                       "password": "x", "base_label": True}}  # fmt: skip
    else:
        graph_store = {"provider": "embedded", "config": {"path": str(tmp_path / "graph")}}
    server.enqueue("extract_entities", {"entities": [{"entity": "alice", "entity_type": "person"},
                                                     {"entity": "sci-fi movies", "entity_type": "genre"}]})  # fmt: skip
    server.enqueue("establish_relationships", {"relations": [{"source": "alice", "relationship": "loves",
                                                              "destination": "sci-fi movies"}]})  # fmt: skip
    server.enqueue("extract_facts", {"facts": ["Not a big fan of thriller movies", "Loves sci-fi movies"]})
    quickstart(Memory, mem0_config(server, tmp_path, graph_store), server)
    assert server.calls() == 2  # graph extraction and facts: nothing similar existed, so no update stage


def test_aliases_map_and_ignored_keys_warn_once(server, tmp_path, caplog):
    mem0_compat._warned.clear()
    caplog.set_level(logging.WARNING, logger="graphmem.config")
    config = mem0_config(server, tmp_path, {"provider": "embedded", "config": {"path": str(tmp_path / "g"), "base_label": True}})
    loaded = MemoryConfig.load(config)
    assert loaded.llm.config.base_url == server.base_url and loaded.embedder.config == {"dims": TEST_DIMS}
    MemoryConfig.load(config)
    warned = [r.getMessage() for r in caplog.records]
    for key in ("vector_store", "version", "llm.config.top_p", "graph_store.config.base_label"):
        assert sum(f"'{key}'" in w for w in warned) == 1, key  # once per process, not per load
    ollama = MemoryConfig.load({"llm": {"provider": "ollama", "config": {"ollama_base_url": "http://box:11434/v1"}}})
    assert ollama.llm.config.base_url == "http://box:11434/v1"


@pytest.mark.parametrize(
    ("section", "named"),
    [
        ({"graph_store": {"provider": "memgraph", "config": {}}}, "embedded, neo4j"),
        ({"graph_store": {"provider": "kuzu"}}, "embedded, neo4j"),
        ({"graph_store": {"provider": "neptune", "config": {"endpoint": "x"}}}, "embedded, neo4j"),
        ({"llm": {"provider": "anthropic", "config": {"model": "claude"}}}, "openai"),
        ({"embedder": {"provider": "huggingface", "config": {}}}, "onnx"),
    ],
)
def test_unsupported_providers_name_what_is_supported(section, named):
    with pytest.raises(ConfigError) as err:
        MemoryConfig.load(section)
    assert named in str(err.value)


def test_embedding_dims_is_checked_against_a_fixed_size_model(server, tmp_path):
    from conftest import MODEL_DIR

    config = {"llm": {"provider": "openai", "config": {"openai_base_url": server.base_url, "api_key": "k"}},
              "embedder": {"provider": "onnx", "config": {"model_dir": str(MODEL_DIR), "embedding_dims": 1536}},
              "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "g")}},
              "history_db_path": str(tmp_path / "h.db")}  # fmt: skip
    with pytest.raises(ConfigError, match="1536"):
        Memory.from_config(config)
