"""mem0 1.0 configurations, loaded unchanged: its key names mapped onto graphmem's, the keys graphmem
has no use for dropped with one WARNING each (per process), and what cannot work refused clearly.

    llm.config.openai_base_url / ollama_base_url / lmstudio_base_url / vllm_base_url /
      deepseek_base_url / openrouter_base_url / xai_base_url      -> llm.config.base_url
    llm.config.top_p, enable_vision, vision_details, http_client_proxies, ...  -> ignored (warned)
    embedder.config.embedding_dims  -> dims (openai, hashing); checked against the model (onnx)
    embedder.config.openai_base_url -> base_url
    graph_store.config.base_label   -> accepted, no-op (graphmem always labels entities :Entity)
    vector_store, version, reranker, enable_graph, api_version  -> ignored (warned)
"""

from __future__ import annotations

import logging
from typing import Any

from graphmem.errors import ConfigError

log = logging.getLogger("graphmem.config")

#: top-level mem0 keys with no meaning in graphmem (one store holds graph and memories)
IGNORED_TOP = ("vector_store", "version", "reranker", "enable_graph", "api_version")
_BASE_URL_ALIASES = (
    "openai_base_url", "ollama_base_url", "lmstudio_base_url", "vllm_base_url", "deepseek_base_url",
    "openrouter_base_url", "xai_base_url",
)  # fmt: skip
_IGNORED_LLM = (
    "top_p", "top_k", "enable_vision", "vision_details", "http_client_proxies", "site_url", "app_name",
    "models", "route", "response_format", "azure_kwargs", "store",
)  # fmt: skip
_EMBEDDER_BASE_URL_ALIASES = ("openai_base_url", "ollama_base_url", "lmstudio_base_url")
_IGNORED_EMBEDDER = ("model_kwargs", "http_client_proxies", "memory_add_embedding_type", "memory_search_embedding_type")
GRAPH_PROVIDERS = ("embedded", "neo4j")
_warned: set[str] = set()


def warn_once(key: str, why: str) -> None:
    """One WARNING per ignored key per process: visible, not repeated on every Memory()."""
    if key not in _warned:
        _warned.add(key)
        log.warning("config key %r is accepted for mem0 compatibility but %s", key, why)


def normalise(data: dict[str, Any]) -> dict[str, Any]:
    """A copy of a (mem0 or graphmem) config dict in graphmem's own keys."""
    data = dict(data)
    for key in IGNORED_TOP:
        if key in data:
            data.pop(key)
            warn_once(key, "graphmem does not use it (one store keeps the graph and the memory facts)")
    if isinstance(data.get("llm"), dict):
        data["llm"] = _llm(data["llm"], "llm")
    if isinstance(data.get("embedder"), dict):
        data["embedder"] = _embedder(data["embedder"])
    if isinstance(data.get("graph_store"), dict):
        data["graph_store"] = _graph_store(data["graph_store"])
    return data


def _section_config(section: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    section = dict(section)
    config = section.get("config")
    return section, dict(config) if isinstance(config, dict) else {}


def _llm(section: dict[str, Any], where: str) -> dict[str, Any]:
    section, config = _section_config(section)
    if not config:
        return section
    _take_base_url(config, _BASE_URL_ALIASES)
    for key in _IGNORED_LLM:
        if key in config:
            config.pop(key)
            warn_once(f"{where}.config.{key}", "graphmem does not send it (tool calls at the configured temperature)")
    section["config"] = config
    return section


def _embedder(section: dict[str, Any]) -> dict[str, Any]:
    section, config = _section_config(section)
    if not config:
        return section
    _take_base_url(config, _EMBEDDER_BASE_URL_ALIASES)
    for key in _IGNORED_EMBEDDER:
        if key in config:
            config.pop(key)
            warn_once(f"embedder.config.{key}", "graphmem's embedders do not use it")
    dims = config.pop("embedding_dims", None)
    if dims is not None:
        if section.get("provider", "openai") in ("openai", "hashing"):
            config.setdefault("dims", dims)
        else:
            section["embedding_dims"] = dims  # checked against the model once it is loaded
    section["config"] = config
    return section


def _graph_store(section: dict[str, Any]) -> dict[str, Any]:
    section, config = _section_config(section)
    provider = section.get("provider", "embedded")
    if provider not in GRAPH_PROVIDERS:
        raise ConfigError(
            f"graph_store provider {provider!r} is not supported; graphmem supports {', '.join(GRAPH_PROVIDERS)} "
            "(Neo4j 5.26+: single server, cluster or Aura; embedded: in-process, no server)"
        )
    if "base_label" in config:
        config.pop("base_label")
        warn_once("graph_store.config.base_label", "it is a no-op: graphmem's nodes are always labelled :Entity")
    if section.get("config") is not None:
        section["config"] = config
    if isinstance(section.get("llm"), dict):
        section["llm"] = _llm(section["llm"], "graph_store.llm")
    return section


def _take_base_url(config: dict[str, Any], aliases: tuple[str, ...]) -> None:
    """mem0's provider-named base URL keys become ``base_url`` (an explicit base_url wins)."""
    for alias in aliases:
        value = config.pop(alias, None)
        if value is not None:
            config.setdefault("base_url", value)
