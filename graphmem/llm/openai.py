"""OpenAI-compatible tool-calling client (OpenAI, Azure OpenAI, vLLM, Ollama, ...)."""

from __future__ import annotations

import json
import logging
import threading
from typing import Any

import openai
from tenacity import (
    RetryError,
    Retrying,
    retry_if_exception_type,
    stop_after_attempt,
    wait_exponential,
)

from graphmem.errors import LLMResponseError, LLMUnavailableError
from graphmem.llm.base import LLM, LLMUsage, ToolCallResult, ToolSpec

log = logging.getLogger(__name__)

# Transient failures worth another try; everything else (400, 401, 404) fails at once.
_TRANSIENT = (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError, openai.APIConnectionError)


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
    ) -> None:
        self.model = model
        self.base_url = base_url
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_retries = max_retries
        self.retry_wait = retry_wait
        self.response_retries = response_retries
        # The SDK's own retries are off: tenacity owns the (bounded, logged) retry policy.
        self._client = client or openai.OpenAI(api_key=api_key, base_url=base_url, timeout=timeout, max_retries=0)
        self.usage = LLMUsage()
        self._lock = threading.Lock()

    def __repr__(self) -> str:  # never the key
        return f"OpenAILLM(model={self.model!r}, base_url={self.base_url!r})"

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
        retrying = Retrying(
            retry=retry_if_exception_type(_TRANSIENT),
            stop=stop_after_attempt(self.max_retries + 1),
            wait=wait_exponential(multiplier=self.retry_wait, max=8 * max(self.retry_wait, 0.01)),
            reraise=False,
        )
        try:
            for attempt in retrying:
                with attempt:
                    response = self._client.chat.completions.create(
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
        return str(self._client.base_url)


def _short(exc: BaseException | None) -> str:
    text = f"{type(exc).__name__}: {exc}" if exc else "unknown error"
    return text if len(text) < 300 else text[:297] + "..."
