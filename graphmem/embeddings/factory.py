"""Build an embedder from a provider name and a config dict.

It lives apart from :mod:`graphmem.embeddings.base` because it imports every implementation, and
each implementation imports the base: a builder inside the base would make a circle.
"""

from __future__ import annotations

import inspect
from typing import Any

from graphmem.embeddings.base import Embedder
from graphmem.errors import ConfigError

PROVIDERS = ("hashing", "onnx", "openai")


def create_embedder(provider: str, config: dict[str, Any] | None = None) -> Embedder:
    """Build an embedder by provider name; ``config`` holds the constructor's keyword arguments.

    ``"hashing"`` -> HashingEmbedder(dims=256); ``"onnx"`` -> OnnxEmbedder(model_dir=..., ...);
    ``"openai"`` -> OpenAIEmbedder(model=..., api_key=..., ...). Unknown providers or options
    raise :class:`~graphmem.errors.ConfigError`.
    """
    if config is None:
        config = {}
    if not isinstance(config, dict):
        raise ConfigError(f"embedder config must be a dict, got {type(config).__name__}")
    key = provider.strip().lower() if isinstance(provider, str) else provider
    cls: type[Embedder]
    if key == "hashing":
        from graphmem.embeddings.hashing import HashingEmbedder

        cls = HashingEmbedder
    elif key == "onnx":
        from graphmem.embeddings.onnx import OnnxEmbedder

        cls = OnnxEmbedder
    elif key == "openai":
        from graphmem.embeddings.openai import OpenAIEmbedder

        cls = OpenAIEmbedder
    else:
        raise ConfigError(
            f"unknown embedder provider {provider!r}; valid providers: {', '.join(PROVIDERS)}"
        )
    accepted = set(inspect.signature(cls.__init__).parameters) - {"self"}
    unknown = sorted(set(config) - accepted)
    if unknown:
        raise ConfigError(
            f"unknown option(s) for the {key} embedder: {', '.join(map(str, unknown))}; "
            f"accepted: {', '.join(sorted(accepted))}"
        )
    return cls(**config)
