"""Configuration: pydantic models accepting mem0's keys.

    Memory.from_config({
        "llm": {"provider": "openai", "config": {"model": "gpt-4.1-mini", "api_key": "...", "base_url": None}},
        "embedder": {"provider": "openai" | "onnx" | "hashing", "config": {...}},
        "graph_store": {"provider": "embedded" | "neo4j", "config": {...}, "threshold": 0.7},
        "history_db_path": "~/.graphmem/history.db",
        "custom_fact_extraction_prompt": None, "custom_update_memory_prompt": None,
    })

Secrets (api keys, passwords) are SecretStr, and URLs are shown without their credentials: neither
appears in reprs or logs.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)

from graphmem.compat import mem0_config as mem0_compat
from graphmem.errors import ConfigError
from graphmem.errors.redact import redact_value
from graphmem.home import default_store_folder, graphmem_home
from graphmem.observability import spans
from graphmem.schema import limits
from graphmem.schema.ontology import Ontology

log = logging.getLogger(__name__)


#: OpenAI-compatible servers; they differ only in their default base URL.
LLM_PROVIDERS = {
    "openai": None,
    "azure_openai": None,
    "vllm": "http://localhost:8000/v1",
    "ollama": "http://localhost:11434/v1",
    "lmstudio": "http://localhost:1234/v1",
    "openai_compatible": None,
    # mem0 providers whose servers speak OpenAI's API (tool calls included)
    "deepseek": "https://api.deepseek.com/v1",
    "groq": "https://api.groq.com/openai/v1",
    "together": "https://api.together.xyz/v1",
    "openrouter": "https://openrouter.ai/api/v1",
    "xai": "https://api.x.ai/v1",
}



class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True, defer_build=True)

    def __repr_args__(self) -> Iterator[tuple[str | None, Any]]:
        # a URL may hold credentials (http://user:pass@host/v1) and a free-form config dict a key:
        # every repr (and str) of a config shows them masked (graphmem.errors.redact)
        for key, value in super().__repr_args__():
            yield key, redact_value(key, value)


def _env(name: str, default: str | None = None) -> str | None:
    return os.environ.get(name) or default


class LLMSettings(_Model):
    # GRAPHMEM_LLM_MODEL / GRAPHMEM_LLM_BASE_URL fill in what a config does not set, for every
    # entry point (Memory(), the CLI, the demo); read when a config is loaded, never at import.
    model: str = Field(default_factory=lambda: os.environ.get("GRAPHMEM_LLM_MODEL") or "gpt-4.1-mini")
    api_key: SecretStr | None = None
    base_url: str | None = Field(default_factory=lambda: _env("GRAPHMEM_LLM_BASE_URL"))
    # None: never sent. Unset: 0.0, or not sent to a reasoning model (see graphmem/llm/profiles.py)
    temperature: float | None = 0.0
    max_tokens: int = 2000
    reasoning: bool | None = None  # None: known from the model name (gpt-5*, o1*, o3*, o4*)
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] | None = None  # None: from the profile
    reasoning_effort: str | None = "low"  # sent to reasoning models only (or when set explicitly)
    structured_output: Literal["auto", "tools", "json"] = "auto"
    timeout: float = 60.0
    max_retries: int = Field(3, ge=0, le=10)
    retry_wait: float = Field(0.5, ge=0)
    api_version: str | None = None  # azure_openai only
    azure_endpoint: str | None = None  # azure_openai only


class LLMConfig(_Model):
    provider: str = "openai"
    config: LLMSettings = Field(default_factory=LLMSettings)

    @field_validator("provider")
    @classmethod
    def _known(cls, v: str) -> str:
        if v not in LLM_PROVIDERS:
            raise ValueError(
                f"llm provider {v!r} is not supported; graphmem speaks the OpenAI API: {', '.join(LLM_PROVIDERS)}"
            )
        return v


class EmbedderConfig(_Model):
    provider: Literal["openai", "onnx", "hashing"] = "openai"
    config: dict[str, Any] = Field(default_factory=dict)
    embedding_dims: int | None = Field(None, ge=1)  # mem0's key for a model whose size is fixed: checked at start


class Neo4jSettings(_Model):
    url: str = "bolt://127.0.0.1:7687"
    username: str | None = None
    password: SecretStr | None = None
    database: str | None = None
    #: plan the add and search statements in the background after set-up (stores/neo4j/warm.py)
    warm_plans: bool = True
    #: MiB of scopes' entity and fact vectors kept by the process for relation search (stores/neo4j/scope_cache.py); 0: none
    relation_cache_mb: float = Field(256.0, ge=0.0)


class EmbeddedSettings(_Model):
    # a MemoryConfig fills the path in from its embedder when the config does not set it (home.py)
    path: Path = Field(default_factory=lambda: graphmem_home() / "graph")
    #: read the last durable state without taking the folder's lock (another process may own it); writes fail
    read_only: bool = False


class GraphStoreConfig(_Model):
    provider: Literal["embedded", "neo4j"] = "embedded"
    config: dict[str, Any] = Field(default_factory=dict)
    threshold: float = Field(0.7, ge=0.0, le=1.0)
    custom_prompt: str | None = None  # mem0's key: replaces the graph extraction system prompt
    llm: LLMConfig | None = None  # mem0 allows a separate LLM for graph stages
    ontology: Ontology | None = None  # the user's entity and relation types (graphmem.schema.ontology)

    def settings(self) -> Neo4jSettings | EmbeddedSettings:
        try:
            return Neo4jSettings(**self.config) if self.provider == "neo4j" else EmbeddedSettings(**self.config)
        except ValidationError as exc:
            raise ConfigError(f"graph_store.config for {self.provider}: {_errors(exc)}") from exc


class ContextConfig(_Model):
    """Conversation context for extraction (README: Conversation context)."""

    recent_messages: int = Field(10, ge=0, le=200)  # m: earlier messages shown to the stages; 0 = none
    summary_every: int = Field(5, ge=0)  # K: regenerate the rolling summary every K adds; 0 = never
    max_messages: int = Field(200, ge=0)  # messages kept per scope in the log; older ones are dropped


class RetentionConfig(_Model):
    """Default time to live (README: Retention and erasure); None keeps data until deleted."""

    memory_ttl_days: float | None = Field(None, gt=0)  # memory facts expire this long after they are written
    message_ttl_days: float | None = Field(None, gt=0)  # logged conversation messages likewise
    purge_batch: int = Field(1000, ge=1, le=100_000)  # expired items removed per database statement
    purge_every_seconds: float = Field(60.0, ge=0)  # writes purge expired data at most this often; 0 = never


class LLMLimits(_Model):
    """Bounds on this Memory's LLM requests (every stage, every add; bulk imports need them most)."""

    max_concurrency: int | None = Field(None, ge=1)  # requests in flight at once; None = no bound
    requests_per_minute: int | None = Field(None, ge=1)  # requests started in any 60 s; None = no bound


class BulkConfig(_Model):
    """Memory.add_many and `graphmem import` (README: Bulk import)."""

    workers: int = Field(4, ge=1, le=limits.BULK_WORKERS)  # scopes written concurrently: infer=True adds, or infer=False lanes of batches
    batch_size: int = Field(500, ge=1, le=limits.BATCH_SIZE)  # infer=False adds per transaction (and per embedding call)


class TracingConfig(_Model):
    """OpenTelemetry spans (the ``tracing`` extra; docs/observability.md)."""

    #: "auto": traced when the application imported OpenTelemetry (it set up an SDK, or runs under
    #: opentelemetry-instrument); true: always (a ConfigError without the extra); false: never
    enabled: Literal["auto"] | bool = "auto"
    include_text: bool = False  # message, query and memory text on spans, and unredacted error messages

    @model_validator(mode="after")
    def _installed(self) -> TracingConfig:
        spans.require(self.enabled)  # true without the extra fails at start-up, not silently
        return self


class MemoryConfig(_Model):
    llm: LLMConfig = Field(default_factory=LLMConfig)
    embedder: EmbedderConfig = Field(default_factory=EmbedderConfig)
    graph_store: GraphStoreConfig = Field(default_factory=GraphStoreConfig)
    history_db_path: Path = Field(default_factory=lambda: graphmem_home() / "history.db")
    custom_fact_extraction_prompt: str | None = None
    custom_update_memory_prompt: str | None = None
    custom_invalidation_prompt: str | None = None
    max_message_chars: int = Field(20_000, ge=100, le=limits.MESSAGE_CHARS)  # extraction's cut; longer is refused
    #: cosine from which an existing memory counts as similar to a new fact (and goes to the update stage)
    similar_memory_threshold: float = Field(0.5, ge=-1.0, le=1.0)
    context: ContextConfig = Field(default_factory=ContextConfig)
    retention: RetentionConfig = Field(default_factory=RetentionConfig)
    llm_limits: LLMLimits = Field(default_factory=LLMLimits)
    bulk: BulkConfig = Field(default_factory=BulkConfig)
    tracing: TracingConfig = Field(default_factory=TracingConfig)
    #: "staged": separate tool-calling stages (up to 4 requests); "single_pass": one request per add
    #: offering the five tools (docs/add-modes.md)
    add_mode: Literal["staged", "single_pass"] = "staged"
    #: after set-up, prepare on background threads what the first add and search need (the model
    #: clients, the time parser and, on Neo4j, the statements' plans: graph_store.config.warm_plans);
    #: false for a short-lived process, which then pays only for what it uses (the CLI's one-shot commands)
    warm_up: bool = True
    #: one OpenAI-compatible server for the LLM and an OpenAI-compatible embedder alike (a local
    #: server, graphmem fake-llm): fills llm.config.base_url and, for the openai embedder,
    #: embedder.config.base_url where those are unset. Default: $GRAPHMEM_BASE_URL.
    base_url: str | None = Field(default_factory=lambda: _env("GRAPHMEM_BASE_URL"))

    @model_validator(mode="after")
    def _one_base_url(self) -> MemoryConfig:
        if self.base_url:
            if self.llm.config.base_url is None:
                self.llm.config.base_url = self.base_url
            if self.embedder.provider == "openai" and not self.embedder.config.get("base_url"):
                self.embedder.config["base_url"] = self.base_url
        return self

    @model_validator(mode="after")
    def _store_follows_embedder(self) -> MemoryConfig:
        # a store keeps the embedder it was built with: each embedder's default store is its own (home.py)
        if self.graph_store.provider == "embedded" and "path" not in self.graph_store.config:
            self.graph_store.config["path"] = str(default_store_folder(self.embedder.provider, self.embedder.config))
        return self

    @classmethod
    def load(cls, data: dict[str, Any] | None) -> MemoryConfig:
        if data is not None and not isinstance(data, Mapping):
            raise ConfigError(f"a graphmem config is a dict (JSON object), got {type(data).__name__}")
        data = mem0_compat.normalise(dict(data or {}))
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise ConfigError(f"invalid graphmem config: {_errors(exc)}") from exc


def _errors(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'config'}: {e['msg']}" for e in exc.errors())
