"""OpenAI-compatible client (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp, gateways, ...).

Structured answers are asked for in this order of preference, and what a server refused is learnt
once per client (one refused request per kind, then never again):

1. tool calls (one tool forced by name; several offered with ``tool_choice="required"``);
2. a named ``tool_choice`` when a server refuses ``"required"`` (one request per tool);
3. the call parsed from the answer's text when the model wrote it as text (see structured.py);
4. JSON mode (``response_format`` json_schema, else json_object, with the schema in the prompt)
   when a server refuses ``tools`` (``llm.config.structured_output: json`` forces it).

Sampling parameters come from a request profile (profiles.py) and heal themselves on a 400 that
names a parameter. The ``openai`` SDK is imported and its client built on the first request, not
at construction: a Memory that only reads never needs an LLM key.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from graphmem.errors import ConfigError, LLMResponseError, LLMUnavailableError
from graphmem.errors.redact import guard_client_logs, redact_url
from graphmem.llm import usage as usage_meter
from graphmem.llm.base import LLM, LLMUsage, ToolCallResult, ToolSpec
from graphmem.llm.profiles import Adaptations, Auto, Refusal, choose_profile, classify
from graphmem.llm.structured import arguments_object, calls_from_text, json_mode_messages, response_format
from graphmem.observability import conventions
from graphmem.observability.spans import lazy_span

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)

STRUCTURED_OUTPUTS = ("auto", "tools", "json")
#: seconds a request waits for the client's first request of its shape (see OpenAILLM._answer)
PROBE_WAIT = 2.0
_FORMATS: tuple[str | None, ...] = ("json_schema", "json_object", None)


def _transient() -> tuple[type[Exception], ...]:
    """Failures worth another try; everything else (400, 401, 404) fails at once."""
    import openai

    return (openai.RateLimitError, openai.InternalServerError, openai.APITimeoutError, openai.APIConnectionError)


class _NoUsableCall(Exception):
    """The model answered without a valid call of the requested tool (retried once, then reported)."""


class _Refused(Exception):
    """The server refused the request (400/422) for a reason the client cannot heal by itself."""

    def __init__(self, refusal: Refusal) -> None:
        super().__init__(refusal.message)
        self.refusal = refusal


class _Learnt:
    """What this client's server refused, so no later request repeats it."""

    def __init__(self, json_mode: bool) -> None:
        self.json_mode = json_mode  # tools refused (or configured): JSON mode for every stage
        self.choice_many = "required"  # "required" -> "named" (one request per tool) -> "none"
        self.choice_one = "named"  # "named" -> "none"
        self.format_level = 0  # index into _FORMATS
        self.notes: list[str] = []


class OpenAILLM(LLM):
    def __init__(
        self,
        model: str = "gpt-4.1-mini",
        api_key: str | None = None,
        base_url: str | None = None,
        temperature: float | None | Auto = "auto",
        max_tokens: int = 2000,
        timeout: float = 60.0,
        max_retries: int = 3,
        retry_wait: float = 0.5,
        response_retries: int = 1,
        client: openai.OpenAI | None = None,
        client_factory: Callable[[], openai.OpenAI] | None = None,
        reasoning: bool | None = None,
        max_tokens_param: str | None = None,
        reasoning_effort: str | None | Auto = "auto",
        structured_output: str = "auto",
    ) -> None:
        if structured_output not in STRUCTURED_OUTPUTS:
            raise ConfigError(f"llm structured_output {structured_output!r}: use one of {', '.join(STRUCTURED_OUTPUTS)}")
        self.model = model
        self.base_url = base_url
        self.profile = choose_profile(model, reasoning, max_tokens_param, temperature, reasoning_effort)
        self.max_tokens = max_tokens
        self.max_retries = max_retries
        self.retry_wait = retry_wait
        self.response_retries = response_retries
        self.structured_output = structured_output
        self.adaptations = Adaptations()
        self._learnt = _Learnt(json_mode=structured_output == "json")
        self._api_key = api_key
        self._timeout = timeout
        self._client_factory = client_factory
        self._built: openai.OpenAI | None = client
        self.usage = LLMUsage()
        self._lock = threading.Lock()
        self._probe = threading.Lock()  # first request of each shape goes alone: a refusal is learnt once
        self._probe_open = False  # a first request took longer than PROBE_WAIT: nobody waits any more
        self._settled: set[str] = set()

    def __repr__(self) -> str:  # never the key, nor credentials in the URL
        return f"OpenAILLM(model={self.model!r}, base_url={redact_url(self.base_url) if self.base_url else None!r})"

    @property
    def temperature(self) -> float | None:
        return self.profile.temperature

    @property
    def adapted(self) -> list[str]:
        """What this client changed after a server refused it, in words (graphmem doctor)."""
        return [*self.adaptations.notes, *self._learnt.notes]

    @property
    def _client(self) -> openai.OpenAI:
        """The SDK client, built on first use (a missing key is a ConfigError then, not at start-up)."""
        with self._lock:
            if self._built is None:
                self._built = self._build_client()
            return self._built

    def prepare(self) -> None:
        try:
            client = self._client  # built and kept under the lock
            # the SDK imports its resources on first access, and works out its platform headers
            # (a subprocess) on the first request
            client.chat.completions  # noqa: B018
            client.default_headers  # noqa: B018
        except Exception:  # noqa: BLE001 - no key yet, a factory's own client: the first request says what is wrong
            pass

    def _build_client(self) -> openai.OpenAI:
        import openai

        try:
            if self._client_factory is not None:
                return self._client_factory()
            guard_client_logs()  # the HTTP client logs each request's URL, credentials included
            # The SDK's own retries are off: tenacity owns the (bounded, logged) retry policy.
            return openai.OpenAI(api_key=self._api_key, base_url=self.base_url, timeout=self._timeout, max_retries=0)
        except openai.OpenAIError as exc:
            # the SDK's own message ends in a period: one sentence each, no "..", and no key was sent at all
            reason = str(exc).rstrip(". ")
            missing = "no API key: " if "credentials" in reason.lower() or "api_key" in reason.lower() else ""
            raise ConfigError(f"LLM {self.model!r}: {missing}{reason}. Set OPENAI_API_KEY or llm.config.api_key.") from exc

    # -- one structured answer -------------------------------------------------------------------

    def call_tools(self, stage: str, messages: list[dict[str, str]], tools: list[ToolSpec]) -> ToolCallResult:
        last: Exception | None = None
        for _ in range(self.response_retries + 1):
            try:
                return self._answer(stage, messages, tools)
            except _NoUsableCall as exc:
                last = exc
                log.warning("stage %s: %s; asking again", stage, exc)
        names = ", ".join(t.name for t in tools)
        raise LLMResponseError(f"stage {stage!r}: no usable call of {names} from the model ({last})")

    def _answer(self, stage: str, messages: list[dict[str, str]], tools: list[ToolSpec]) -> ToolCallResult:
        """The first request of each shape goes alone, so concurrent first requests (an add's facts
        and graph requests) learn a refusal from one 400, not one each. A server refuses at once; a
        first request still unanswered after PROBE_WAIT is being worked on, so the others go ahead
        rather than queue behind a slow model."""
        shape = "many" if len(tools) > 1 else "one"
        if shape in self._settled or self._probe_open:
            return self._answer_now(stage, messages, tools)
        if not self._probe.acquire(timeout=PROBE_WAIT):
            self._probe_open = True
            return self._answer_now(stage, messages, tools)
        try:
            result = self._answer_now(stage, messages, tools)
            self._settled.add(shape)
            return result
        finally:
            self._probe.release()

    def _answer_now(self, stage: str, messages: list[dict[str, str]], tools: list[ToolSpec]) -> ToolCallResult:
        if self._learnt.json_mode:
            return self._json_answer(stage, messages, tools)
        choice = self._learnt.choice_many if len(tools) > 1 else self._learnt.choice_one
        if choice == "named" and len(tools) > 1:
            return self._per_tool(stage, messages, tools)
        try:
            response = self._send(stage, self._tool_params(messages, tools, choice))
        except _Refused as exc:
            if self._learn(exc.refusal, tools, choice):
                return self._answer_now(stage, messages, tools)
            raise self._unusable(stage, exc) from exc
        return self._read(response, tools, "tool_calls")

    def _tool_params(self, messages: list[dict[str, str]], tools: list[ToolSpec], choice: str) -> dict[str, Any]:
        params: dict[str, Any] = {"messages": messages, "tools": [t.as_openai() for t in tools]}
        if choice == "required":
            params["tool_choice"] = "required"
        elif choice == "named":
            params["tool_choice"] = {"type": "function", "function": {"name": tools[0].name}}
        return params

    def _learn(self, refusal: Refusal, tools: list[ToolSpec], choice: str) -> bool:
        """Remember a refusal the client can work around; False when it cannot."""
        learnt = self._learnt
        if refusal.kind == "tools" and self.structured_output == "auto":
            learnt.json_mode = True
            return self._note("answers in JSON mode (the server takes no tools)", refusal)
        if refusal.kind == "tool_choice" and choice != "none":
            if len(tools) > 1:
                learnt.choice_many = "named" if choice == "required" else "none"
                return self._note(f"asks {'one request per tool' if choice == 'required' else 'without tool_choice'} "
                                  f"(the server refused tool_choice {choice!r})", refusal)
            learnt.choice_one = "none"
            return self._note("asks without tool_choice (the server refused a named tool_choice)", refusal)
        return False

    def _note(self, note: str, refusal: Refusal) -> bool:
        with self._lock:
            self._learnt.notes.append(note)
        log.warning("LLM %r: graphmem now %s: %s", self.model, note, refusal.message.strip()[:200])
        return True

    def _per_tool(self, stage: str, messages: list[dict[str, str]], tools: list[ToolSpec]) -> ToolCallResult:
        """One named-choice request per tool, merged as if one answer had called each."""
        merged = ToolCallResult(calls={}, mode="named_choice")
        for tool in tools:
            try:
                part = self._answer_now(stage, messages, [tool])
            except _NoUsableCall:
                continue  # the model may rightly have nothing for one of several tools
            for name, calls in part.calls.items():
                merged.calls.setdefault(name, []).extend(calls)
            merged.dropped += part.dropped
            merged.prompt_tokens += part.prompt_tokens
            merged.completion_tokens += part.completion_tokens
        if not merged.calls:
            raise _NoUsableCall("no usable call in any of the per-tool answers")
        return merged

    def _json_answer(self, stage: str, messages: list[dict[str, str]], tools: list[ToolSpec]) -> ToolCallResult:
        params: dict[str, Any] = {"messages": json_mode_messages(messages, tools)}
        kind = _FORMATS[self._learnt.format_level]
        if kind is not None:
            params["response_format"] = response_format(tools, kind)
        try:
            response = self._send(stage, params)
        except _Refused as exc:
            if exc.refusal.kind == "response_format" and self._learnt.format_level < len(_FORMATS) - 1:
                self._learnt.format_level += 1
                following = _FORMATS[self._learnt.format_level] or "the schema in the prompt only"
                self._note(f"asks for JSON with {following} (the server refused response_format {kind})", exc.refusal)
                return self._json_answer(stage, messages, tools)
            raise self._unusable(stage, exc) from exc
        return self._read(response, tools, "json")

    def _unusable(self, stage: str, exc: _Refused) -> LLMUnavailableError:
        hint = ""
        if exc.refusal.kind == "tools":
            hint = " (the server takes no tools: set llm.config.structured_output to 'json' or 'auto')"
        return LLMUnavailableError(f"stage {stage!r}: LLM at {self._endpoint()} refused the request: {exc.refusal.message[:300]}{hint}")

    # -- transport -------------------------------------------------------------------------------

    def _send(self, stage: str, params: dict[str, Any]) -> Any:
        """One request with the profile's parameters, healing refused parameters (one retry each)."""
        import openai

        base = {"model": self.model, **params, **self.profile.params(self.max_tokens)}
        while True:
            sent = self.adaptations.apply(base)
            try:
                return self._post(stage, sent)
            except (openai.BadRequestError, openai.UnprocessableEntityError) as exc:
                with self._lock:
                    self.usage.refused += 1
                message, param, code = _error_fields(exc)
                refusal = classify(message, param, code, sent)
                if refusal.kind == "parameter" and self.adaptations.learn(refusal, self.model):
                    continue
                raise _Refused(refusal) from exc

    def _post(self, stage: str, params: dict[str, Any]) -> Any:
        import openai
        from tenacity import RetryError, Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

        client = self._client
        retrying = Retrying(
            retry=retry_if_exception_type(_transient()),
            stop=stop_after_attempt(self.max_retries + 1),
            wait=wait_exponential(multiplier=self.retry_wait, max=8 * max(self.retry_wait, 0.01)),
            reraise=False,
        )
        try:
            for attempt in retrying:
                with attempt, lazy_span(partial(conventions.chat_request, self.model, stage, params, self.base_url), "client") as traced:
                    response = client.chat.completions.create(**params)  # one span per attempt: a retry is a request
                    if traced.recording:
                        traced.update(conventions.chat_response(response))
        except RetryError as exc:
            cause = exc.last_attempt.exception()
            raise LLMUnavailableError(
                f"stage {stage!r}: LLM at {self._endpoint()} failed {self.max_retries + 1} times: {_short(cause)}"
            ) from cause
        except (openai.BadRequestError, openai.UnprocessableEntityError):
            raise
        except openai.APIStatusError as exc:
            raise LLMUnavailableError(f"stage {stage!r}: LLM at {self._endpoint()} refused the request: {_short(exc)}") from exc
        except (openai.OpenAIError, ValueError) as exc:  # e.g. an HTTP body that is not JSON
            raise _NoUsableCall(f"unreadable answer from {self._endpoint()}: {_short(exc)}") from exc
        self._record(stage, response)
        return response

    def _record(self, stage: str, response: Any) -> None:
        usage = getattr(response, "usage", None)
        prompt = getattr(usage, "prompt_tokens", 0) or 0
        completion = getattr(usage, "completion_tokens", 0) or 0
        with self._lock:
            self.usage.record(stage, prompt, completion)
        usage_meter.record_llm(stage, prompt, completion)

    def _read(self, response: Any, tools: list[ToolSpec], mode: str) -> ToolCallResult:
        choices = getattr(response, "choices", None) or []
        if not choices:
            raise _NoUsableCall("empty choices")
        message = choices[0].message
        offered = {t.name for t in tools}
        calls: dict[str, list[dict[str, Any]]] = {}
        dropped = 0
        for call in getattr(message, "tool_calls", None) or []:
            fn = getattr(call, "function", None)
            args = arguments_object(getattr(fn, "arguments", None)) if fn is not None else None
            if fn is None or fn.name not in offered or args is None:
                dropped += 1
                continue
            calls.setdefault(fn.name, []).append(args)
        if not calls:
            for name, args in calls_from_text(getattr(message, "content", None), tools):
                calls.setdefault(name, []).append(args)
            mode = "text" if calls and mode == "tool_calls" else mode
        if not calls:
            raise _NoUsableCall(f"{dropped} unusable tool call(s)" if dropped else "no tool call")
        usage = getattr(response, "usage", None)
        return ToolCallResult(
            calls=calls,
            dropped=dropped,
            prompt_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            completion_tokens=getattr(usage, "completion_tokens", 0) or 0,
            mode=mode,
        )

    def _endpoint(self) -> str:
        """Where requests go, for messages: without credentials (graphmem.errors.redact)."""
        return redact_url(str(self._built.base_url) if self._built is not None else str(self.base_url or "https://api.openai.com/v1"))


def _error_fields(exc: Any) -> tuple[str, str | None, str | None]:
    """Message, param and code of a refused request, whatever shape the server's error body has
    (OpenAI's ``{"error": {...}}``, vLLM's flat object, Gemini's one-element list)."""
    body = exc.body
    if isinstance(body, list) and body:
        body = body[0]
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        body = body["error"]
    if isinstance(body, dict):
        message = body.get("message")
        param, code = body.get("param"), body.get("code")
        return (str(message) if message else str(exc), param if isinstance(param, str) else None, code if isinstance(code, str) else None)
    return str(body or exc), getattr(exc, "param", None), getattr(exc, "code", None)


def _short(exc: BaseException | None) -> str:
    text = f"{type(exc).__name__}: {exc}" if exc else "unknown error"
    return text if len(text) < 300 else text[:297] + "..."
