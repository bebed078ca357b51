"""Spans applied from outside the code they measure, one line where each applies.

- ``traced_methods``: a span per public method of ``Memory`` (``graphmem.add``, ``graphmem.search``
  ...), with the scope ids, and the counts and usage of the answer; message and query text only
  with ``tracing.include_text``.
- ``traced_operations``: a span per store operation (the embedded store: its operations are its
  statements).
- ``traced_stage``: a span per LLM stage's ``run`` (``graphmem.stage.facts`` ...), parent of its
  model requests.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from graphmem.observability import conventions
from graphmem.observability.spans import Enabled, active, span, traced_call, wanted

T = TypeVar("T")
R = TypeVar("R")
P = ParamSpec("P")

SCOPE_KEYS = ("user_id", "agent_id", "run_id")
#: public methods that do no work worth a span
UNTRACED = frozenset({"close", "usage"})
#: the argument of a call that is user text, recorded only with include_text (and the attribute it becomes)
TEXT_ARGUMENTS = {"add": ("messages", "graphmem.messages"), "search": ("query", "graphmem.query"),
                  "update": ("data", "graphmem.text"), "timeline": ("entity", "graphmem.entity"),
                  "forget_entity": ("name", "graphmem.entity")}
#: identifiers a call names (not user text): recorded always, cut to MAX_ID characters
ID_ARGUMENTS = {"memory_id": "graphmem.memory_id", "add_id": "graphmem.add_id"}
MAX_ID = 128
MAX_TEXT = 4096


def traced_methods(cls: type[T]) -> type[T]:
    """Wrap every public method of ``cls`` (Memory) in its call's span."""
    for name, member in list(vars(cls).items()):
        if not name.startswith("_") and name not in UNTRACED and inspect.isfunction(member):
            setattr(cls, name, _traced_method(name, member))
    return cls


def _traced_method(name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    signature = inspect.signature(method)

    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        settings = getattr(getattr(self, "config", None), "tracing", None)
        enabled: Enabled = settings.enabled if settings is not None else "auto"
        if not wanted(enabled) and active() is None:  # the common case: no work, not even a generator
            return method(self, *args, **kwargs)
        include_text = bool(settings is not None and settings.include_text)
        attributes = _call_attributes(self, name, signature, args, kwargs, include_text)
        with traced_call(f"graphmem.{name}", enabled, include_text, attributes) as traced:
            result = method(self, *args, **kwargs)
            if traced.recording:
                traced.update(_outcome(result))
            return result

    return call


def _call_attributes(memory: Any, name: str, signature: inspect.Signature, args: tuple[Any, ...], kwargs: dict[str, Any],
                     include_text: bool) -> dict[str, Any]:
    try:
        bound = signature.bind(memory, *args, **kwargs).arguments
    except TypeError:  # the method itself will say what is wrong
        bound = dict(kwargs)
    store = type(getattr(memory, "store", None)).__name__.removesuffix("Store").lower() or None
    attributes: dict[str, Any] = {"graphmem.operation": name, "graphmem.store": store}
    for key in SCOPE_KEYS:
        if isinstance(bound.get(key), str):
            attributes[f"graphmem.{key}"] = bound[key][:MAX_ID]
    for key, attribute in ID_ARGUMENTS.items():
        if isinstance(bound.get(key), str):
            attributes[attribute] = bound[key][:MAX_ID]
    if name == "add":
        attributes["graphmem.add_mode"] = getattr(getattr(memory, "config", None), "add_mode", None)
        attributes["graphmem.infer"] = bound.get("infer", True) is not False
    if name == "search" and isinstance(bound.get("limit"), int):
        attributes["graphmem.search.limit"] = bound["limit"]
    if include_text and name in TEXT_ARGUMENTS:
        argument, attribute = TEXT_ARGUMENTS[name]
        attributes[attribute] = _text(bound.get(argument))
    return attributes


def _text(value: Any) -> str | None:
    """A call's text for a span (include_text only): a string, or the contents of a message list."""
    if isinstance(value, str):
        return value[:MAX_TEXT]
    if isinstance(value, list):
        parts = [m.get("content") if isinstance(m, dict) else m for m in value]
        return "\n".join(str(p) for p in parts if p is not None)[:MAX_TEXT]
    return None


def _outcome(result: Any) -> dict[str, Any]:
    """Counts of what a call answered, and an add's usage (never the answer's text)."""
    if not isinstance(result, dict):
        return {"graphmem.results": len(result)} if isinstance(result, list) else {}
    out: dict[str, Any] = {}
    for key in ("results", "relations"):
        if isinstance(result.get(key), list):
            out[f"graphmem.{key}"] = len(result[key])
    if isinstance(result.get("add_id"), str):
        out["graphmem.add_id"] = result["add_id"][:MAX_ID]
    usage = result.get("usage")
    if isinstance(usage, dict):
        for key in ("llm_requests", "prompt_tokens", "completion_tokens", "embedding_requests"):
            if isinstance(usage.get(key), int):
                out[f"graphmem.usage.{key}"] = usage[key]
    return out


def traced_operations(system: str, names: Iterable[str]) -> Callable[[type[T]], type[T]]:
    """Wrap the named methods of a store class in a ``db.*`` span each (``db.operation.name``)."""

    def decorate(cls: type[T]) -> type[T]:
        for name in names:
            setattr(cls, name, _traced_operation(system, name, getattr(cls, name)))
        return cls

    return decorate


def _traced_operation(system: str, name: str, method: Callable[..., Any]) -> Callable[..., Any]:
    attributes = conventions.statement(system, name)

    @functools.wraps(method)
    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        if active() is None:
            return method(self, *args, **kwargs)
        with span(name, attributes, "client") as traced:
            result = method(self, *args, **kwargs)
            traced.update(conventions.returned_rows(result))
            return result

    return call


class _Stage(Protocol):
    name: str


S = TypeVar("S", bound=_Stage)


def traced_stage(run: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
    """A stage's ``run`` in a ``graphmem.stage.<name>`` span (its model requests are children)."""

    def call(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        if active() is None:
            return run(self, *args, **kwargs)
        with span(f"graphmem.stage.{self.name}", {"graphmem.stage": self.name}):
            return run(self, *args, **kwargs)

    functools.update_wrapper(call, run)
    return call
