"""A server request joined to its caller's trace: the W3C ``traceparent`` (and ``tracestate``,
``baggage``: whatever propagators the application set, W3C by default) read from the request's
headers, and the request's SERVER span started under it, so graphmem's spans are its children.

Used by the REST server for every request and by the MCP server for every tool call (over HTTP the
headers are the request's; over stdio there are none and the tool call starts a trace).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from graphmem.observability.spans import NO_SPAN, Enabled, Span, Tracing, _started, wanted


@contextmanager
def joined(headers: Mapping[str, str] | None, name: str, attributes: Mapping[str, Any], enabled: Enabled,
           include_text: bool = False, *, only_to_join: bool = False) -> Iterator[Span]:
    """The SERVER span of one request, child of the trace its headers name (a new trace without one).
    ``only_to_join``: no span when the headers name no trace, or the one the current span is in
    already (the MCP SDK's own span of the call, joined through the message's ``_meta``): the
    request is then traced by whoever started the current span."""
    if not wanted(enabled):
        yield NO_SPAN
        return
    from opentelemetry import context, propagate, trace

    carrier = {k.lower(): v for k, v in (headers or {}).items()}
    incoming = propagate.extract(carrier)
    if only_to_join:
        theirs = trace.get_current_span(incoming).get_span_context()
        if not theirs.is_valid or theirs.trace_id == trace.get_current_span().get_span_context().trace_id:
            yield NO_SPAN
            return
    token = context.attach(incoming)
    try:
        with _started(name, attributes, "server", Tracing(include_text)) as started:
            yield started
    finally:
        context.detach(token)
