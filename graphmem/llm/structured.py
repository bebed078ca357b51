"""Calls read from an answer's text, and the JSON-mode request for servers that refuse ``tools``.

Servers without a tool-call parser (vLLM / llama.cpp serving Qwen, Hermes or Llama models) return
the call as text: Hermes/Qwen ``<tool_call>{"name": ..., "arguments": ...}</tool_call>`` tags, a JSON
object with ``name`` and ``arguments`` or ``parameters`` (often in a ```json fence), or only the
arguments object. Reasoning models wrap their thoughts in ``<think>...</think>``; those are ignored.
Everything read here is a candidate only: the stages validate each argument object with the same
pydantic models as a real tool call, so text never gets further than a tool call would.
"""

from __future__ import annotations

import json
import re
from typing import Any

from graphmem.llm.base import ToolSpec
from graphmem.stages.base import PromptTemplate

_THINK = re.compile(r"<think>.*?(</think>|$)", re.DOTALL | re.IGNORECASE)
_TOOL_CALL = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)

Call = tuple[str, dict[str, Any]]


def arguments_object(raw: Any) -> dict[str, Any] | None:
    """A call's arguments as an object: a JSON string (the OpenAI wire format) or an object already
    (some gateways send it so); None when it is neither."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None
    return None


def json_objects(text: str) -> list[Any]:
    """Every top-level JSON value that starts with ``{`` in ``text``, in order."""
    decoder = json.JSONDecoder()
    out: list[Any] = []
    i = text.find("{")
    while i != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except ValueError:
            i = text.find("{", i + 1)
            continue
        out.append(value)
        i = text.find("{", end)
    return out


def _candidates(content: str) -> list[Any]:
    text = _THINK.sub("", content)
    tagged = _TOOL_CALL.findall(text)
    if tagged:
        return [v for block in tagged for v in json_objects(block)]
    fenced = _FENCE.findall(text)
    if fenced:
        return [v for block in fenced for v in json_objects(block)]
    return json_objects(text)


def _as_calls(value: Any, tools: list[ToolSpec]) -> list[Call]:
    """One JSON value as calls: ``{"name", "arguments"|"parameters"}``, ``{tool: args, ...}`` (JSON
    mode's answer), or the bare arguments of the one tool whose required keys it has."""
    if not isinstance(value, dict):
        return []
    names = {t.name for t in tools}
    name = value.get("name")
    if isinstance(name, str) and ("arguments" in value or "parameters" in value):
        args = arguments_object(value.get("arguments", value.get("parameters")))
        return [(name, args)] if name in names and args is not None else []
    keyed = [(k, v) for k, v in value.items() if k in names and isinstance(v, dict)]
    if keyed:
        return keyed
    fitting = [t for t in tools if _fits(value, t)]
    return [(fitting[0].name, value)] if len(fitting) == 1 else []


def _fits(value: dict[str, Any], tool: ToolSpec) -> bool:
    props = set((tool.parameters.get("properties") or {}).keys())
    required = set(tool.parameters.get("required") or [])
    keys = set(value)
    return bool(keys & props) and required <= keys


def calls_from_text(content: str | None, tools: list[ToolSpec]) -> list[Call]:
    """The calls written as text in ``content`` (nothing when none can be read)."""
    if not content or "{" not in content:
        return []
    return [call for value in _candidates(content) for call in _as_calls(value, tools)]


def answer_schema(tools: list[ToolSpec]) -> dict[str, Any]:
    """JSON mode's answer: one object holding each tool's arguments under the tool's name, so one
    request answers any number of tools, as one tool-calling request does."""
    return {
        "type": "object",
        "properties": {t.name: t.parameters for t in tools},
        "required": [t.name for t in tools],
        "additionalProperties": False,
    }


def response_format(tools: list[ToolSpec], kind: str) -> dict[str, Any]:
    if kind == "json_schema":
        return {"type": "json_schema", "json_schema": {"name": "graphmem_answer", "schema": answer_schema(tools), "strict": False}}
    return {"type": "json_object"}


def json_mode_messages(messages: list[dict[str, str]], tools: list[ToolSpec]) -> list[dict[str, str]]:
    """``messages`` with the answer's schema and the tools' purposes added to the system prompt (the
    server may ignore ``response_format``; the prompt alone must still say what to write)."""
    template = PromptTemplate.load("json_mode")
    described = "\n".join(f"- {t.name}: {t.description}" for t in tools)
    note = template.render(tools=described, schema=json.dumps(answer_schema(tools), ensure_ascii=False))
    out = [dict(m) for m in messages]
    if out and out[0].get("role") == "system":
        out[0]["content"] = f"{out[0]['content']}\n\n{note}"
    else:
        out.insert(0, {"role": "system", "content": note})
    return out
