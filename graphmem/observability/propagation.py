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
           include_text: bool = False) -> Iterator[Span]:
    """The SERVER span of one request, child of the trace its headers name (a new trace without one)."""
    if not wanted(enabled):
        yield NO_SPAN
        return
    from opentelemetry import context, propagate

    carrier = {k.lower(): v for k, v in (headers or {}).items()}
    token = context.attach(propagate.extract(carrier))
    try:
        with _started(name, attributes, "server", Tracing(include_text)) as started:
            yield started
    finally:
        context.detach(token)
