"""Embedders: text -> L2-normalised vectors (cosine similarity = dot product).

- :class:`HashingEmbedder` - deterministic lexical hashing, no extra dependencies.
- :class:`OnnxEmbedder` - local sentence model (``pip install 'graphmem[local]'``).
- :class:`OpenAIEmbedder` - OpenAI or any OpenAI-compatible embeddings endpoint.

Use :func:`create_embedder` to build one from a provider name and a config dict.

May import only errors, types and schema. The builder lives apart from the base (factory.py):
it imports every implementation, and each imports the base.
"""

from graphmem.embeddings.base import Embedder
from graphmem.embeddings.factory import PROVIDERS, create_embedder
from graphmem.embeddings.hashing import HashingEmbedder
from graphmem.embeddings.onnx import OnnxEmbedder
from graphmem.embeddings.openai import OpenAIEmbedder

__all__ = [
    "PROVIDERS",
    "Embedder",
    "HashingEmbedder",
    "OnnxEmbedder",
    "OpenAIEmbedder",
    "create_embedder",
]
