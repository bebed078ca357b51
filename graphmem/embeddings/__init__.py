"""Embedders: text -> L2-normalised vectors (cosine similarity = dot product).

- :class:`HashingEmbedder` - deterministic lexical hashing, no extra dependencies.
- :class:`OnnxEmbedder` - local sentence model (``pip install 'graphmem[local]'``).
- :class:`OpenAIEmbedder` - OpenAI or any OpenAI-compatible embeddings endpoint.

Use :func:`create_embedder` to build one from a provider name and a config dict.

May import only errors, types and schema. The builder lives apart from the base (factory.py):
it imports every implementation, and each imports the base.

The implementations load on first access (PEP 562): building a Memory imports only the one its
config names, and the onnx module's numpy only when it is used.
"""

from typing import TYPE_CHECKING, Any

from graphmem.embeddings.base import Embedder
from graphmem.embeddings.factory import PROVIDERS, create_embedder

if TYPE_CHECKING:
    from graphmem.embeddings.hashing import HashingEmbedder
    from graphmem.embeddings.onnx import OnnxEmbedder
    from graphmem.embeddings.openai import OpenAIEmbedder

_LAZY = {"HashingEmbedder": "hashing", "OnnxEmbedder": "onnx", "OpenAIEmbedder": "openai"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(f"graphmem.embeddings.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "PROVIDERS",
    "Embedder",
    "HashingEmbedder",
    "OnnxEmbedder",
    "OpenAIEmbedder",
    "create_embedder",
]
