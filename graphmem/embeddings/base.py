"""The embedder interface shared by every provider.

Subclasses implement :meth:`Embedder._embed`; callers use :meth:`Embedder.embed`, which counts
calls, validates the shapes, L2-normalises the vectors (so cosine similarity is a plain dot
product) and translates unexpected failures into :class:`~graphmem.errors.EmbeddingError`.
"""

from __future__ import annotations

import math
import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING

from graphmem.errors import EmbeddingError, GraphMemError, InvalidInputError
from graphmem.observability import conventions
from graphmem.observability.spans import lazy_span

if TYPE_CHECKING:  # numpy loads with the first batch: a command that embeds nothing never imports it
    import numpy as np


def fallback_vector(dims: int) -> list[float]:
    """The fixed unit vector used for inputs that carry no signal (one-hot on bucket 0)."""
    vec = [0.0] * dims
    vec[0] = 1.0
    return vec


def normalise_rows(matrix: np.ndarray) -> np.ndarray:
    """L2-normalise each row; rows with zero norm become the fixed fallback unit vector."""
    import numpy as np

    matrix = np.asarray(matrix, dtype=np.float64)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    zero = norms[:, 0] == 0.0
    norms[zero] = 1.0
    out: np.ndarray = matrix / norms
    if zero.any():
        out[zero] = 0.0
        out[zero, 0] = 1.0
    return out


class Embedder(ABC):
    """Turns texts into L2-normalised float vectors of length :attr:`dims`.

    Attributes:
        dims: vector dimension, known after construction.
        name: short identifier such as ``"hashing-256"`` or ``"onnx:all-MiniLM-L6-v2"``.
        calls: number of non-empty :meth:`embed` calls made (one call = one batch).
    """

    dims: int
    name: str
    calls: int = 0
    #: prefixed to search queries only (embed_query); e.g. bge's "Represent this sentence for ..."
    query_instruction: str = ""
    #: prefixed to every stored text (embed): documents, facts, entity names; e.g. e5's "passage: "
    passage_instruction: str = ""
    #: the cosine two unrelated stored texts typically get with this model (0 for MiniLM, 0.43 for
    #: bge-small), and a search query and an unrelated stored text (0 / 0.34): thresholds are relative
    #: similarities mapped through them (cosine_for; embeddings/models.py)
    score_floor: float = 0.0
    query_floor: float = 0.0
    #: the cosine at which a candidate's meaning starts to count when search ranks; None: the query
    #: floor (``ranking_floor``; embeddings/models.py, ModelProfile.rank_floor)
    rank_floor: float | None = None

    def __init__(self) -> None:
        self.calls = 0
        self._calls_lock = threading.Lock()

    @abstractmethod
    def _embed(self, texts: list[str]) -> list[list[float]] | np.ndarray:
        """Embed a non-empty batch, as lists or one array (embed() reads either with np.asarray).
        May return unnormalised vectors; embed() normalises."""

    def prepare(self) -> None:  # noqa: B027 - optional hook: most models have nothing to build ahead
        """Build what the first request would build (an SDK client, its imports), without a request.
        Never raises. Memory calls it on a background thread after set-up."""

    def fingerprint(self) -> str | None:
        """A text naming this model's weights and every setting that shapes its vectors: two
        embedders with one fingerprint embed every text alike, so a vector derived from fixed texts
        may be kept on disk under it (retrieval.hubness keeps its probes' centre so). None (the
        default): nothing is kept; a provider returns one only when its key names the weights, not
        just a model's name (a local server may serve other weights under the same name)."""
        return None

    def _expected_dims(self) -> int | None:
        """The dimension the vectors must have, or None if not known yet (see OpenAIEmbedder)."""
        return self.dims

    def _count_call(self) -> None:
        lock = getattr(self, "_calls_lock", None)
        if lock is None:  # a subclass forgot to call super().__init__()
            self.calls = getattr(self, "calls", 0) + 1
            return
        with lock:
            self.calls += 1

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed a batch of stored texts (documents, facts, names: the passage instruction is
        prefixed); returns one unit-length vector per text, in order. Search queries go through
        :meth:`embed_query` instead.

        An empty batch returns ``[]`` and is not counted. Errors other than graphmem's own are
        raised as :class:`EmbeddingError` with the original exception as ``__cause__``.
        """
        if isinstance(texts, (str, bytes)):
            raise InvalidInputError("embed() takes a sequence of strings; use embed_one() for a single text")
        return self._embed_checked(list(texts), self.passage_instruction)

    def embed_query(self, text: str) -> list[float]:
        """Embed one search query (the model's query instruction prefixed; one counted call)."""
        if not isinstance(text, str):
            raise InvalidInputError(f"embed_query() takes a string, got {type(text).__name__}")
        return self._embed_checked([text], self.query_instruction)[0]

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed several search queries in one counted call (the query instruction prefixed). A
        subclass that embeds a query its own way (overrides embed_query, e.g. a wrapper whose inner
        model prefixes its own instruction) and not this gets one embed_query per text."""
        if isinstance(texts, (str, bytes)):
            raise InvalidInputError("embed_queries() takes a sequence of strings; use embed_query() for one")
        if type(self).embed_query is not Embedder.embed_query:
            return [self.embed_query(t) for t in texts]
        return self._embed_checked(list(texts), self.query_instruction)

    def cosine_for(self, relative: float, query: bool = False) -> float:
        """This model's cosine for a relative similarity (0 = unrelated, 1 = identical) between two
        stored texts, or (``query``) from a search query to a stored text: how every threshold of
        graphmem is applied, so 0.7 means the same closeness with any model."""
        floor = self.query_floor if query else self.score_floor
        return floor + relative * (1.0 - floor)

    def ranking_floor(self) -> float:
        """The floor the search fusion measures this model's cosines from (retrieval.scale.on_scale)."""
        return self.query_floor if self.rank_floor is None else self.rank_floor

    def _embed_checked(self, texts: list[str], prefix: str) -> list[list[float]]:
        for i, text in enumerate(texts):
            if not isinstance(text, str):
                raise InvalidInputError(f"embed() item {i} is {type(text).__name__}, expected str")
        if not texts:
            return []
        self._count_call()
        with lazy_span(partial(conventions.embeddings_request, self.name, self.name.split(":")[0].split("-")[0], len(texts),
                               self._expected_dims()), "client"):
            try:
                raw = self._embed([prefix + t for t in texts] if prefix else texts)
            except GraphMemError:
                raise
            except Exception as exc:  # translate at the boundary
                raise EmbeddingError(f"{self.name}: embedding failed: {type(exc).__name__}: {exc}") from exc
            return self._finish(raw, len(texts))

    def _finish(self, raw: object, count: int) -> list[list[float]]:
        import numpy as np

        try:
            matrix = np.asarray(raw, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise EmbeddingError(f"{self.name}: embedder returned ragged or non-numeric vectors") from exc
        if matrix.ndim != 2 or matrix.shape[0] != count:
            raise EmbeddingError(
                f"{self.name}: expected {count} vectors, got an array of shape {matrix.shape}"
            )
        expected = self._expected_dims()
        if expected is not None and matrix.shape[1] != expected:
            raise EmbeddingError(
                f"{self.name}: expected vectors of length {expected}, got {matrix.shape[1]}"
            )
        if not np.isfinite(matrix).all():
            raise EmbeddingError(f"{self.name}: embedder returned NaN or infinite values")
        vectors: list[list[float]] = normalise_rows(matrix).tolist()
        return vectors

    def embed_one(self, text: str) -> list[float]:
        """Embed a single text (one counted call)."""
        return self.embed([text])[0]

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, dims={self.dims})"


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity of two vectors (a dot product for the unit vectors embed() returns)."""
    dot = sum(x * y for x, y in zip(a, b, strict=False))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    return dot / (na * nb)
