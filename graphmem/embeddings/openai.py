"""Embeddings from the OpenAI API or any OpenAI-compatible ``/v1/embeddings`` endpoint."""

from __future__ import annotations

import os
import threading
from typing import Any

from graphmem.embeddings.base import Embedder
from graphmem.errors import ConfigError, EmbeddingError
from graphmem.errors.redact import guard_client_logs, redact_url

KNOWN_DIMS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
# The API accepts at most 2048 inputs per request; bigger batches are split (still one call).
_MAX_INPUTS_PER_REQUEST = 2048


class OpenAIEmbedder(Embedder):
    """Calls ``client.embeddings.create`` of the ``openai`` SDK.

    ``api_key`` defaults to ``$OPENAI_API_KEY``; ``base_url`` to the SDK default (which honours
    ``$OPENAI_BASE_URL``). ``dims`` is sent as ``dimensions`` when given; otherwise it is known
    for the OpenAI models in :data:`KNOWN_DIMS` and taken from the first response for others.
    The key is never shown by ``repr()`` or in error messages.
    """

    def __init__(
        self,
        model: str = "text-embedding-3-small",
        api_key: str | None = None,
        base_url: str | None = None,
        dims: int | None = None,
        timeout: float = 30,
        max_retries: int = 3,
        score_floor: float = 0.0,
        query_floor: float | None = None,
    ) -> None:
        """``score_floor`` / ``query_floor``: the model's cosine for unrelated texts (embeddings/models.py);
        0 unless given (no OpenAI model was measured here)."""
        super().__init__()
        for label, floor in (("score_floor", score_floor), ("query_floor", query_floor)):
            if floor is not None and (isinstance(floor, bool) or not isinstance(floor, (int, float)) or not -1.0 <= floor < 1.0):
                raise ConfigError(f"OpenAIEmbedder {label} must be a cosine in [-1, 1), got {floor!r}")
        self.score_floor = float(score_floor)
        self.query_floor = float(score_floor if query_floor is None else query_floor)
        if not isinstance(model, str) or not model.strip():
            raise ConfigError("OpenAIEmbedder needs a model name")
        if dims is not None and (isinstance(dims, bool) or not isinstance(dims, int) or dims < 1):
            raise ConfigError(f"OpenAIEmbedder dims must be a positive integer or None, got {dims!r}")
        if not isinstance(max_retries, int) or max_retries < 0:
            raise ConfigError(f"OpenAIEmbedder max_retries must be an integer >= 0, got {max_retries!r}")
        if not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ConfigError(f"OpenAIEmbedder timeout must be a positive number, got {timeout!r}")
        self.model = model
        self.name = f"openai:{model}"
        self.timeout = timeout
        self.max_retries = max_retries
        self._request_dims = dims
        self._dims: int | None = dims if dims is not None else KNOWN_DIMS.get(model)
        self._api_key = api_key
        self._own_server = bool(base_url)  # a configured server (local, fake) gets a placeholder key if none is set
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        self._built: Any = None
        self._build_lock = threading.Lock()

    def _client(self) -> Any:
        """The SDK client, built on the first request or ahead by ``prepare`` (Memory calls it on a
        background thread): a Memory that never embeds (get_all, history) needs no key."""
        if self._built is not None:
            return self._built
        with self._build_lock:
            return self._built if self._built is not None else self._build()

    def prepare(self) -> None:
        try:
            client = self._client()
            client.embeddings  # noqa: B018 - the SDK imports its resources on first access,
            client.default_headers  # noqa: B018 - and works out its platform headers (a subprocess) on the first request
        except Exception:  # noqa: BLE001 - no key yet: the first request says so
            pass

    def _build(self) -> Any:
        key = self._api_key or os.environ.get("OPENAI_API_KEY") or ("not-needed" if self._own_server else None)
        if not key:
            raise ConfigError("OpenAIEmbedder needs an API key: pass api_key or set OPENAI_API_KEY")
        try:
            import openai
        except ImportError as exc:
            raise ConfigError("the OpenAI embedder needs the openai package: pip install openai") from exc
        guard_client_logs()  # the HTTP client logs each request's URL, credentials included
        try:
            self._built = openai.OpenAI(api_key=key, base_url=self.base_url, timeout=self.timeout, max_retries=self.max_retries)
        except Exception as exc:
            raise ConfigError(f"cannot create the OpenAI client: {type(exc).__name__}") from exc
        return self._built

    # dims is known up front for known models or when given; otherwise one probe request.
    @property
    def dims(self) -> int:  # type: ignore[override]  # read-only here: probed on first use, never set
        if self._dims is None:
            self.embed(["dimension probe"])
        assert self._dims is not None
        return self._dims

    def _expected_dims(self) -> int | None:
        return self._dims

    def _request(self, texts: list[str]) -> list[list[float]]:
        kwargs: dict[str, Any] = {"model": self.model, "input": texts, "encoding_format": "float"}
        if self._request_dims is not None:
            kwargs["dimensions"] = self._request_dims
        client = self._client()
        import openai

        try:
            response = client.embeddings.create(**kwargs)
        except openai.APITimeoutError as exc:
            raise EmbeddingError(
                f"{self.name}: request to {self.base_url} timed out after {self.timeout}s"
            ) from exc
        except openai.APIConnectionError as exc:
            raise EmbeddingError(f"{self.name}: cannot reach {self.base_url}: {exc}") from exc
        except openai.APIStatusError as exc:
            raise EmbeddingError(
                f"{self.name}: {self.base_url} answered HTTP {exc.status_code}: {exc.message}"
            ) from exc
        except openai.OpenAIError as exc:
            raise EmbeddingError(f"{self.name}: request to {self.base_url} failed: {exc}") from exc
        data = sorted(response.data, key=lambda item: item.index)
        if len(data) != len(texts):
            raise EmbeddingError(
                f"{self.name}: {self.base_url} returned {len(data)} embeddings for {len(texts)} inputs"
            )
        return [list(item.embedding) for item in data]

    def _embed(self, texts: list[str]) -> list[list[float]]:
        # The API rejects empty inputs; those get a zero vector, which embed() turns into the
        # fixed fallback unit vector.
        send = [i for i, text in enumerate(texts) if text.strip()]
        vectors: dict[int, list[float]] = {}
        for start in range(0, len(send), _MAX_INPUTS_PER_REQUEST):
            chunk = send[start : start + _MAX_INPUTS_PER_REQUEST]
            for i, vec in zip(chunk, self._request([texts[i] for i in chunk]), strict=False):
                vectors[i] = vec
        if self._dims is None:
            if not vectors:
                raise EmbeddingError(f"{self.name}: cannot learn the vector size from empty texts only")
            self._dims = len(next(iter(vectors.values())))
        zero = [0.0] * self._dims
        return [vectors.get(i, zero) for i in range(len(texts))]

    def __repr__(self) -> str:
        return (
            f"OpenAIEmbedder(model={self.model!r}, base_url={redact_url(self.base_url)!r}, "
            f"dims={self._dims}, timeout={self.timeout}, max_retries={self.max_retries})"
        )
