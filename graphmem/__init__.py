"""graphmem: knowledge-graph-first long-term memory for LLM agents.

Only the exceptions load with the package; ``Memory``, ``MemoryConfig`` and the search presets
load on first access (PEP 562), so ``import graphmem`` and ``graphmem --help`` stay fast and
importing never pulls in the openai SDK or the Neo4j driver (they load when a Memory needs them).

Layers, lowest first; a package imports only from its own layer or below (tests/test_layers.py):
the foundation (errors with redact, types, results, schema, launcher, observability); the models (llm, stages, embeddings);
stores; the core (retrieval, ingest, lifecycle, compat); the facade (config, factory, memory, aio);
the interfaces (cli, server, ui, browser, integrations, testing).
"""

from typing import TYPE_CHECKING, Any

from graphmem.errors import (
    ClosedError,
    ConfigError,
    EmbeddingError,
    GraphMemError,
    IdempotencyConflictError,
    InvalidInputError,
    LimitExceededError,
    LLMError,
    LLMResponseError,
    LLMUnavailableError,
    MissingScopeError,
    NotFoundError,
    StoreError,
    StoreUnavailableError,
    WriteOutcomeUnknown,
)

if TYPE_CHECKING:
    from graphmem.aio import AsyncMemory
    from graphmem.config import MemoryConfig
    from graphmem.memory import Memory
    from graphmem.retrieval import BM25_ONLY, HYBRID, VECTOR_ONLY, SearchPreset

__version__ = "0.1.0"

_LAZY = {
    "AsyncMemory": "graphmem.aio",
    "Memory": "graphmem.memory",
    "MemoryConfig": "graphmem.config",
    "SearchPreset": "graphmem.retrieval",
    "HYBRID": "graphmem.retrieval",
    "VECTOR_ONLY": "graphmem.retrieval",
    "BM25_ONLY": "graphmem.retrieval",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))

__all__ = [
    "AsyncMemory",
    "BM25_ONLY",
    "HYBRID",
    "VECTOR_ONLY",
    "ClosedError",
    "ConfigError",
    "EmbeddingError",
    "GraphMemError",
    "IdempotencyConflictError",
    "InvalidInputError",
    "LLMError",
    "LLMResponseError",
    "LLMUnavailableError",
    "LimitExceededError",
    "Memory",
    "MemoryConfig",
    "MissingScopeError",
    "NotFoundError",
    "SearchPreset",
    "StoreError",
    "StoreUnavailableError",
    "WriteOutcomeUnknown",
    "__version__",
]
