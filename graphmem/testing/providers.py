"""Provider profiles for the scripted server: each reproduces one server's documented request
validation and answer style, so graphmem's client is tested against what it will meet.

``ScriptedLLMServer(profile=PROFILES["ollama-no-tools"])`` validates every chat request as that
provider would (a refusal is answered with the provider's status code and error body, and recorded
in ``server.refusals``) and shapes its answers the provider's way. The scripted replies are the same
for every profile: a reply scripted for a tool is delivered as a tool call, as text, or inside a JSON
answer, as the profile dictates.

What each profile is based on (error texts are the providers' own, as quoted in their docs and trackers):

- ``openai-reasoning`` / ``gateway-reasoning``: OpenAI's reasoning models (gpt-5*, o-series) answer
  400 ``{"error": {"message": "Unsupported parameter: 'max_tokens' is not supported with this model.
  Use 'max_completion_tokens' instead.", "type": "invalid_request_error", "param": "max_tokens",
  "code": "unsupported_parameter"}}`` (quoted in griptape-ai/ComfyUI-Griptape#312,
  ITSpecialist111/ai_automation_suggester#38) and ``Unsupported value: 'temperature' does not support
  0.0 with this model. Only the default (1) value is supported.`` (code ``unsupported_value``). The
  gateway profile serves such a model under a name the client cannot recognise.
- ``ollama-no-tools``: Ollama's /v1 endpoint answers 400 ``{"error": {"message": "<model> does not
  support tools", "type": "api_error", "param": null, "code": null}}`` (ollama/ollama#6027, #5793);
  it takes ``response_format`` json_schema (Ollama structured outputs).
- ``vllm-hermes-text`` / ``vllm-fence-text``: vLLM without ``--tool-call-parser`` returns the model's
  raw text: Hermes/Qwen ``<tool_call>{"name", "arguments"}</tool_call>`` blocks (after a
  ``<think>`` block for reasoning models), or a ```json fence holding ``{"name", "parameters"}``
  (Llama 3 style).
- ``vllm-no-auto-choice``: vLLM without ``--enable-auto-tool-choice`` answers 400 ``{"object":
  "error", "message": "\\"auto\\" tool choice requires --enable-auto-tool-choice and
  --tool-call-parser to be set", "type": "BadRequestError", ...}`` (vllm-project/vllm#9986) and, for
  ``"required"``, ``tool_choice must either be a named tool, "auto", or "none"`` (vllm#12834); a
  named tool choice works (guided decoding).
- ``gateway-args-object``: gateways that return ``function.arguments`` as a JSON object, not a string.
- ``azure-openai``: ``POST {endpoint}/openai/deployments/{deployment}/chat/completions?api-version=...``
  with an ``api-key`` header (Azure OpenAI REST reference); no api-version is a 404 ``Resource not
  found``; the deployment serves a reasoning model (same validation as openai-reasoning).
- ``anthropic-compat``: Anthropic's OpenAI SDK compatibility page: ``temperature`` between 0 and 1,
  ``n`` must be 1, ``response_format``, ``reasoning_effort`` and tools' ``strict`` are ignored;
  errors as ``{"type": "error", "error": {"type": "invalid_request_error", "message": ...}}``.
- ``gemini-compat``: Gemini's OpenAI compatibility endpoint: errors are a one-element list
  ``[{"error": {"code": 400, "message": ..., "status": "INVALID_ARGUMENT"}}]``, ``finish_reason`` is
  ``"stop"`` even with tool calls (Google AI forum, Dec 2025), ``n`` must be 1.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from graphmem.testing.replies import DEFAULT_REPLIES

__all__ = ["BROKEN_PROFILES", "PROFILES", "ProviderProfile", "Refusal"]

Refusal = tuple[int, bytes, str]  # status, body, kind


def _json(obj: Any) -> bytes:
    return json.dumps(obj).encode("utf-8")


@dataclass(frozen=True)
class ProviderProfile:
    """How one provider validates requests and shapes answers (see the module docstring)."""

    name: str
    model: str = "scripted"  # the model name a client should configure
    reasoning_validation: bool = False
    tools: bool = True
    refused_choices: frozenset[str] = frozenset()
    answer_style: str = "tool_calls"  # tool_calls | hermes | fence | args_object
    error_shape: str = "openai"  # openai | vllm | anthropic | gemini
    azure: bool = False
    response_format: bool = True  # json_schema honoured (False: ignored, the prompt must do)
    finish_reason_with_tools: str = "tool_calls"
    refused_formats: frozenset[str] = frozenset()  # response_format types answered 400
    json_answers: bool = True  # False: the model ignores any JSON instruction and answers prose
    client_config: dict[str, Any] = field(default_factory=dict)  # llm.config a user would write

    # -- validation ------------------------------------------------------------------------------

    def route(self, path: str, query: dict[str, list[str]], headers: Any) -> tuple[str | None, Refusal | None]:
        """The OpenAI path this request stands for, or a refusal (Azure's deployment routes)."""
        if not self.azure:
            return path, None
        parts = path.strip("/").split("/")
        tail = parts[3:] if len(parts) > 3 and parts[:2] == ["openai", "deployments"] else []
        target = {("chat", "completions"): "/v1/chat/completions", ("embeddings",): "/v1/embeddings"}.get(tuple(tail))
        not_found = (404, _json({"error": {"code": "404", "message": "Resource not found"}}), "path")
        if target is None or not query.get("api-version"):
            return None, not_found
        if not headers.get("api-key"):
            return None, (401, _json({"error": {"code": "401", "message": "Access denied due to invalid subscription key or wrong API endpoint."}}), "auth")
        return target, None

    def check(self, body: dict[str, Any]) -> Refusal | None:
        """A refusal for a chat request this provider would not take, else None."""
        if self.reasoning_validation:
            refused = _reasoning_refusal(body)
            if refused:
                return refused
        if body.get("tools") and not self.tools:
            return self._error(f"{body.get('model')} does not support tools", "tools")
        choice = body.get("tool_choice")
        if isinstance(choice, str) and choice in self.refused_choices and body.get("tools"):
            if choice == "auto":
                return self._error('"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set', "tool_choice")
            return self._error('tool_choice must either be a named tool, "auto", or "none"', "tool_choice")
        fmt = body.get("response_format")
        if isinstance(fmt, dict) and fmt.get("type") in self.refused_formats:
            return self._error(f"response_format of type {fmt.get('type')!r} is not supported", "response_format", "response_format")
        if self.error_shape in ("anthropic", "gemini") and body.get("n", 1) != 1:
            return self._error("n must be 1", "n")
        temperature = body.get("temperature")
        if self.error_shape == "anthropic" and isinstance(temperature, (int, float)) and not 0 <= temperature <= 1:
            return self._error("temperature: range: 0 <= temperature <= 1", "temperature")
        return None

    def _error(self, message: str, kind: str, param: str | None = None, code: str | None = None) -> Refusal:
        if self.error_shape == "vllm":
            body: Any = {"object": "error", "message": message, "type": "BadRequestError", "param": None, "code": 400}
        elif self.error_shape == "anthropic":
            body = {"type": "error", "error": {"type": "invalid_request_error", "message": message}}
        elif self.error_shape == "gemini":
            body = [{"error": {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}}]
        else:
            body = {"error": {"message": message, "type": "invalid_request_error" if param else "api_error", "param": param, "code": code}}
        return 400, _json(body), kind

    # -- answers ---------------------------------------------------------------------------------

    def json_tools(self, body: dict[str, Any]) -> list[str]:
        """The tools a JSON-mode request (no ``tools``) wants: the keys of its answer schema."""
        fmt = body.get("response_format")
        if self.response_format and isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            schema = (fmt.get("json_schema") or {}).get("schema") or {}
            return [k for k in (schema.get("properties") or {}) if isinstance(k, str)]
        return _tools_named_in_prompt(body)

    def shape(self, completion: dict[str, Any], body: dict[str, Any], calls: list[tuple[str, str]]) -> dict[str, Any]:
        """Reshape a tool-call completion the provider's way."""
        message = completion["choices"][0]["message"]
        if not body.get("tools"):  # JSON mode: one object, each tool's arguments under its name
            message.pop("tool_calls", None)
            message["content"] = json.dumps(_merged(calls)) if self.json_answers else PROSE
            completion["choices"][0]["finish_reason"] = "stop"
            return completion
        if self.answer_style in ("hermes", "fence") and calls:
            message.pop("tool_calls", None)
            message["content"] = _as_text(calls, self.answer_style)
            completion["choices"][0]["finish_reason"] = "stop"
        elif self.answer_style == "args_object":
            for call in message.get("tool_calls") or []:
                call["function"]["arguments"] = json.loads(call["function"]["arguments"])
        if message.get("tool_calls"):
            completion["choices"][0]["finish_reason"] = self.finish_reason_with_tools
        if self.reasoning_validation:
            details = {"reasoning_tokens": 16}
            completion["usage"]["completion_tokens_details"] = details
            completion["usage"]["completion_tokens"] += 16
            completion["usage"]["total_tokens"] += 16
        return completion


PROSE = "Sure! You moved to Denver, and you work at Acme. Anything else I can help with?"


def _reasoning_refusal(body: dict[str, Any]) -> Refusal | None:
    if "max_tokens" in body:
        return 400, _json({"error": {
            "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.",
            "type": "invalid_request_error", "param": "max_tokens", "code": "unsupported_parameter"}}), "max_tokens"
    temperature = body.get("temperature")
    if temperature is not None and temperature != 1:
        return 400, _json({"error": {
            "message": f"Unsupported value: 'temperature' does not support {temperature} with this model. Only the default (1) value is supported.",
            "type": "invalid_request_error", "param": "temperature", "code": "unsupported_value"}}), "temperature"
    return None


def _tools_named_in_prompt(body: dict[str, Any]) -> list[str]:
    """json_object requests carry the schema in the prompt only; find its tool keys there."""
    text = " ".join(str(m.get("content")) for m in body.get("messages") or [] if isinstance(m, dict))
    return [name for name in DEFAULT_REPLIES if f'"{name}"' in text]


def _merged(calls: list[tuple[str, str]]) -> dict[str, Any]:
    """Several calls of one tool folded into one arguments object (list values concatenated)."""
    out: dict[str, Any] = {}
    for name, arguments in calls:
        args = json.loads(arguments)
        mine = out.setdefault(name, {})
        for key, value in args.items():
            if isinstance(value, list) and isinstance(mine.get(key), list):
                mine[key] = mine[key] + value
            else:
                mine[key] = value
    return out


def _as_text(calls: list[tuple[str, str]], style: str) -> str:
    if style == "hermes":
        blocks = [f'<tool_call>\n{{"name": "{name}", "arguments": {arguments}}}\n</tool_call>' for name, arguments in calls]
        return "<think>\nThe user wants me to call the tools.\n</think>\n\n" + "\n".join(blocks)
    blocks = [f'```json\n{{"name": "{name}", "parameters": {arguments}}}\n```' for name, arguments in calls]
    return "Here is the function call:\n\n" + "\n\n".join(blocks)


PROFILES: dict[str, ProviderProfile] = {
    p.name: p
    for p in (
        ProviderProfile("openai"),
        ProviderProfile("openai-reasoning", model="gpt-5-mini", reasoning_validation=True),
        ProviderProfile("gateway-reasoning", model="acme/prod-chat", reasoning_validation=True),
        ProviderProfile("ollama-no-tools", model="llama3:8b", tools=False),
        ProviderProfile("vllm-hermes-text", model="Qwen/Qwen3-8B", answer_style="hermes", error_shape="vllm"),
        ProviderProfile("vllm-fence-text", model="meta-llama/Llama-3.1-8B-Instruct", answer_style="fence", error_shape="vllm"),
        ProviderProfile("vllm-no-auto-choice", model="Qwen/Qwen2.5-7B-Instruct", refused_choices=frozenset({"required", "auto"}), error_shape="vllm"),
        ProviderProfile("gateway-args-object", model="router/any-model", answer_style="args_object"),
        ProviderProfile("azure-openai", model="memory-prod", reasoning_validation=True, azure=True, client_config={"reasoning": True}),
        ProviderProfile("anthropic-compat", model="claude-sonnet-4-5", error_shape="anthropic", response_format=False),
        ProviderProfile("gemini-compat", model="gemini-2.5-flash", error_shape="gemini", finish_reason_with_tools="stop"),
    )
}

#: Servers graphmem cannot work with, for the tests of graphmem doctor's advice: a model without
#: tool support that ignores JSON instructions, behind a server that refuses response_format.
BROKEN_PROFILES: dict[str, ProviderProfile] = {
    "no-tools-no-json": ProviderProfile(
        "no-tools-no-json", model="tinychat:1b", tools=False, refused_formats=frozenset({"json_schema", "json_object"}), json_answers=False
    ),
}
