"""graphmem: knowledge-graph-first long-term memory for LLM agents."""

from graphmem.config import MemoryConfig
from graphmem.errors import (
    ConfigError,
    EmbeddingError,
    GraphMemError,
    InvalidInputError,
    LLMError,
    LLMResponseError,
    LLMUnavailableError,
    MissingScopeError,
    NotFoundError,
    StoreError,
    StoreUnavailableError,
)
from graphmem.memory import Memory
from graphmem.retrieval import BM25_ONLY, HYBRID, VECTOR_ONLY, SearchPreset

__version__ = "0.1.0"

__all__ = [
    "BM25_ONLY",
    "HYBRID",
    "VECTOR_ONLY",
    "ConfigError",
    "EmbeddingError",
    "GraphMemError",
    "InvalidInputError",
    "LLMError",
    "LLMResponseError",
    "LLMUnavailableError",
    "Memory",
    "MemoryConfig",
    "MissingScopeError",
    "NotFoundError",
    "SearchPreset",
    "StoreError",
    "StoreUnavailableError",
    "__version__",
]
