"""A dependency-free, deterministic embedder based on signed feature hashing.

It captures lexical (not semantic) similarity: shared words and shared character trigrams.
Useful for tests, offline use and as a fallback; use OnnxEmbedder or OpenAIEmbedder for meaning.
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING

from graphmem.embeddings.base import Embedder, fallback_vector
from graphmem.errors import ConfigError

if TYPE_CHECKING:
    import numpy as np

_WORD = re.compile(r"\w+")
# Word tokens carry more weight than any single trigram of that word.
_WORD_WEIGHT = 1.0
_TRIGRAM_WEIGHT = 0.5


class HashingEmbedder(Embedder):
    """Signed feature hashing of word tokens and character trigrams (blake2b, not hash()).

    Text is lower-cased and split into unicode word tokens (``\\w+``); each word contributes
    itself and the character trigrams of ``<word>`` (with boundary markers). Each feature is
    hashed with blake2b to a bucket and a sign. The result is identical across processes,
    machines and Python versions. Texts without any word token map to the fixed unit vector
    one-hot on bucket 0.
    """

    def __init__(self, dims: int = 256) -> None:
        super().__init__()
        if isinstance(dims, bool) or not isinstance(dims, int) or dims < 2:
            raise ConfigError(f"HashingEmbedder dims must be an integer >= 2, got {dims!r}")
        self.dims = dims
        self.name = f"hashing-{dims}"
        self._cache: dict[str, tuple[int, float]] = {}

    def _feature(self, feature: str) -> tuple[int, float]:
        hit = self._cache.get(feature)
        if hit is not None:
            return hit
        digest = hashlib.blake2b(feature.encode("utf-8"), digest_size=8, person=b"graphmem").digest()
        value = int.from_bytes(digest, "little")
        bucket = (value >> 1) % self.dims
        sign = 1.0 if value & 1 else -1.0
        if len(self._cache) < 200_000:
            self._cache[feature] = (bucket, sign)
        return bucket, sign

    def _vector(self, text: str) -> np.ndarray:
        import numpy as np  # with the first batch, not the import (graphmem.embeddings.base)

        vec = np.zeros(self.dims, dtype=np.float64)
        words = _WORD.findall(text.lower())
        if not words:
            return np.asarray(fallback_vector(self.dims))
        for word in words:
            bucket, sign = self._feature("w:" + word)
            vec[bucket] += sign * _WORD_WEIGHT
            padded = f"<{word}>"
            for i in range(len(padded) - 2):
                bucket, sign = self._feature("c:" + padded[i : i + 3])
                vec[bucket] += sign * _TRIGRAM_WEIGHT
        if not vec.any():  # features cancelled out exactly; keep the vector usable
            return np.asarray(fallback_vector(self.dims))
        return vec

    def _embed(self, texts: list[str]) -> list[list[float]]:
        import numpy as np

        vectors: list[list[float]] = np.stack([self._vector(t) for t in texts]).tolist()
        return vectors
