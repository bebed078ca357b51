"""Test helpers for tracing: one SDK provider for the test process, its spans kept in memory."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

_exporter: InMemorySpanExporter | None = None


def exporter() -> InMemorySpanExporter:
    """The process's in-memory exporter (a provider can be set once per process)."""
    global _exporter
    if _exporter is None:
        provider = trace.get_tracer_provider()
        if not isinstance(provider, TracerProvider):
            provider = TracerProvider()
            trace.set_tracer_provider(provider)
        _exporter = InMemorySpanExporter()
        provider.add_span_processor(SimpleSpanProcessor(_exporter))
    return _exporter


def named(spans: Iterable[ReadableSpan], name: str) -> list[ReadableSpan]:
    return [s for s in spans if s.name == name]


def one(spans: Iterable[ReadableSpan], name: str) -> ReadableSpan:
    found = named(spans, name)
    assert len(found) == 1, (name, [s.name for s in spans])
    return found[0]


def children(spans: Iterable[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    return [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]


def descendants(spans: list[ReadableSpan], root: ReadableSpan) -> list[ReadableSpan]:
    out, todo = [], [root]
    while todo:
        found = children(spans, todo.pop())
        out += found
        todo += found
    return out


def texts(span: ReadableSpan) -> list[str]:
    """Every string a span carries: its name, attribute values, events' attributes and status."""
    values: list[Any] = [span.name, span.status.description or ""]
    values += list((span.attributes or {}).values())
    for event in span.events:
        values += list((event.attributes or {}).values())
    flat = []
    for v in values:
        flat += [str(x) for x in v] if isinstance(v, (list, tuple)) else [str(v)]
    return flat
