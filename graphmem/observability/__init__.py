"""OpenTelemetry tracing, off unless asked for (the ``tracing`` extra; docs/observability.md).

A span per public ``Memory`` call (facade.py), per stage, model request and embedding request
(conventions.py: OpenTelemetry's ``gen_ai.*`` attributes), and per store statement or transaction
(``db.*``). Nothing here imports ``opentelemetry`` until a traced call starts one: without the
extra, or with tracing off, every helper is a no-op that costs a context-variable read.

Foundation layer: may import errors only (every layer above calls these helpers).
"""

from graphmem.observability.spans import NO_SPAN, Span, active, lazy_span, redact, span, traced_call, wanted

__all__ = ["NO_SPAN", "Span", "active", "lazy_span", "redact", "span", "traced_call", "wanted"]
