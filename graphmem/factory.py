"""Build the configured parts (LLM, embedder, store) from a MemoryConfig."""

from __future__ import annotations

from typing import Any, cast

from graphmem.config import (
    LLM_PROVIDERS,
    EmbedderConfig,
    GraphStoreConfig,
    LLMConfig,
    Neo4jSettings,
)
from graphmem.embeddings import Embedder, create_embedder
from graphmem.llm import LLM
from graphmem.stores.base import GraphStore


def build_llm(config: LLMConfig) -> LLM:
    """The configured LLM client. Nothing is imported or checked here: the SDK client (and a missing
    key's ConfigError) comes with the first request, so read-only use needs no LLM key."""
    from graphmem.llm.openai import OpenAILLM

    s = config.config
    key = s.api_key.get_secret_value() if s.api_key else None
    base_url = s.base_url or LLM_PROVIDERS[config.provider]
    if key is None and base_url is not None:
        key = "not-needed"  # local servers (vLLM, Ollama) accept any key; the SDK insists on one
    factory = None
    if config.provider == "azure_openai":

        def factory() -> Any:
            import openai

            return openai.AzureOpenAI(
                # None lets the SDK read AZURE_OPENAI_ENDPOINT; its overloads only declare str
                api_key=key, api_version=s.api_version, azure_endpoint=cast(str, s.azure_endpoint), timeout=s.timeout, max_retries=0
            )

    return OpenAILLM(
        model=s.model,
        api_key=key,
        base_url=base_url,
        # defaults follow the model's request profile; what the config sets explicitly wins
        temperature=s.temperature if "temperature" in s.model_fields_set else "auto",
        max_tokens=s.max_tokens,
        reasoning=s.reasoning,
        max_tokens_param=s.max_tokens_param,
        reasoning_effort=s.reasoning_effort if "reasoning_effort" in s.model_fields_set else "auto",
        structured_output=s.structured_output,
        timeout=s.timeout,
        max_retries=s.max_retries,
        retry_wait=s.retry_wait,
        client_factory=factory,
    )


def build_embedder(config: EmbedderConfig) -> Embedder:
    return create_embedder(config.provider, dict(config.config))


def build_store(config: GraphStoreConfig, embedding_dims: int, warm_up: bool = True, embedder_precision: str | None = None,
                **neo4j_options: Any) -> GraphStore:
    """The configured store; ``neo4j_options`` (e.g. connection_timeout) go to the Neo4j driver;
    ``warm_up`` False: no plan warming whatever ``warm_plans`` says (MemoryConfig.warm_up);
    ``embedder_precision``: a store built at another is refused (stores/precision.py; None: not checked)."""
    settings = config.settings()
    if isinstance(settings, Neo4jSettings):
        from graphmem.stores.neo4j import Neo4jStore

        return Neo4jStore(
            url=settings.url,
            username=settings.username,
            password=settings.password.get_secret_value() if settings.password else None,
            database=settings.database,
            embedding_dims=embedding_dims,
            warm_plans=settings.warm_plans and warm_up,
            embedder_precision=embedder_precision,
            relation_cache_mb=settings.relation_cache_mb,
            **neo4j_options,
        )
    from graphmem.stores.embedded import EmbeddedStore

    return EmbeddedStore(path=settings.path.expanduser(), embedding_dims=embedding_dims, read_only=settings.read_only,
                         embedder_precision=embedder_precision)
