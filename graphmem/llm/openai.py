"""OpenAI-compatible tool-calling client (OpenAI, Azure OpenAI, vLLM, Ollama, ...).

The ``openai`` SDK is imported and its client built on the first request, not at construction:
a Memory that only reads (get_all, search, history, the CLI's read commands) never needs an LLM
key, and importing the SDK costs about a second.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tenacity import (
    RetryError,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from graphmem.errors import ConfigError, LLMResponseError, LLMUnavailableError
from graphmem.llm.base import LLM, LLMUsage, ToolCallResult, ToolSpec

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)


def _transient() -> tuple[type[Exception], ...]:
    """Failures worth another try; everything else (400, 401, 404) fails at once."""
    import openai

    return (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError, openai.APIConnectionError)


class _NoUsableCall(Exception):
    """The model answered without a valid call of the requested tool (retried once, then reported)."""


class OpenAILLM(LLM):
    def __init__(
        self,
        model: str = "gpt-4.1-mini",
        api_key: str | None = None,
        base_url: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 2000,
        timeout: float = 60.0,
        max_retries: int = 3,
        retry_wait: float = 0.5,
        response_retries: int = 1,
        client: openai.OpenAI | None = None,
        client_factory: Callable[[], openai.OpenAI] | None = None,
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_retries = max_retries
        self.retry_wait = retry_wait
        self.response_retries = response_retries
        self._api_key = api_key
        self._timeout = timeout
        self._client_factory = client_factory
        self._built: openai.OpenAI | None = client
        self.usage = LLMUsage()
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never the key
        return f"OpenAILLM(model={self.model!r}, base_url={self.base_url!r})"

    @property
    def _client(self) -> openai.OpenAI:
        """The SDK client, built on first use (a missing key is a ConfigError then, not at start-up)."""
        with self._lock:
            if self._built is None:
                self._built = self._build_client()
            return self._built

    def _build_client(self) -> openai.OpenAI:
        import openai

        try:
            if self._client_factory is not None:
                return self._client_factory()
            # The SDK's own retries are off: tenacity owns the (bounded, logged) retry policy.
            return openai.OpenAI(api_key=self._api_key, base_url=self.base_url, timeout=self._timeout, max_retries=0)
        except openai.OpenAIError as exc:
            raise ConfigError(f"LLM {self.model!r}: {exc}. Set OPENAI_API_KEY or llm.config.api_key.") from exc

    def call_tools(self, stage: str, messages: list[dict[str, str]], tools: list[ToolSpec]) -> ToolCallResult:
        last: Exception | None = None
        for _ in range(self.response_retries + 1):
            try:
                return self._parse(self._request(stage, messages, tools), tools)
            except _NoUsableCall as exc:
                last = exc
                log.warning("stage %s: %s; asking again", stage, exc)
        names = ", ".join(t.name for t in tools)
        raise LLMResponseError(f"stage {stage!r}: no usable call of {names} from the model ({last})")

    def _request(self, stage: str, messages: list[dict[str, str]], tools: list[ToolSpec]) -> Any:
        if len(tools) == 1:
            choice: Any = {"type": "function", "function": {"name": tools[0].name}}
        else:
            choice = "required"
        import openai

        client = self._client
        retrying = Retrying(
            retry=retry_if_exception_type(_transient()),
            stop=stop_after_attempt(self.max_retries + 1),
            wait=wait_exponential(multiplier=self.retry_wait, max=8 * max(self.retry_wait, 0.01)),
            reraise=False,
        )
        try:
            for attempt in retrying:
                with attempt:
                    response = client.chat.completions.create(
                        model=self.model,
                        messages=messages,  # type: ignore[arg-type]
                        tools=[t.as_openai() for t in tools],  # type: ignore[misc]
                        tool_choice=choice,
                        temperature=self.temperature,
                        max_tokens=self.max_tokens,
                    )
        except RetryError as exc:
            cause = exc.last_attempt.exception()
            raise LLMUnavailableError(
                f"stage {stage!r}: LLM at {self._endpoint()} failed {self.max_retries + 1} times: {_short(cause)}"
            ) from cause
        except openai.APIStatusError as exc:
            raise LLMUnavailableError(f"stage {stage!r}: LLM at {self._endpoint()} refused the request: {_short(exc)}") from exc
        except (openai.OpenAIError, ValueError) as exc:  # e.g. an HTTP body that is not JSON
            raise _NoUsableCall(f"unreadable answer from {self._endpoint()}: {_short(exc)}") from exc
        usage = getattr(response, "usage", None)
        with self._lock:
            self.usage.record(stage, getattr(usage, "prompt_tokens", 0) or 0, getattr(usage, "completion_tokens", 0) or 0)
        return response

    def _parse(self, response: Any, tools: list[ToolSpec]) -> ToolCallResult:
        choices = getattr(response, "choices", None) or []
        if not choices:
            raise _NoUsableCall("empty choices")
        offered = {t.name for t in tools}
        calls: dict[str, list[dict[str, Any]]] = {}
        dropped = 0
        for call in choices[0].message.tool_calls or []:
            fn = getattr(call, "function", None)
            if fn is None or fn.name not in offered:
                dropped += 1
                continue
            try:
                args = json.loads(fn.arguments or "")
            except (TypeError, ValueError):
                dropped += 1
                continue
            if not isinstance(args, dict):
                dropped += 1
                continue
            calls.setdefault(fn.name, []).append(args)
        if not calls:
            raise _NoUsableCall(f"{dropped} unusable tool call(s)" if dropped else "no tool call")
        usage = getattr(response, "usage", None)
        return ToolCallResult(
            calls=calls,
            dropped=dropped,
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
        )

    def _endpoint(self) -> str:
        return str(self._built.base_url) if self._built is not None else str(self.base_url or "https://api.openai.com/v1")


def _short(exc: BaseException | None) -> str:
    text = f"{type(exc).__name__}: {exc}" if exc else "unknown error"
    return text if len(text) < 300 else text[:297] + "..."
