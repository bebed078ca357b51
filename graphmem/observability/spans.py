"""The span helpers every layer calls, and the switch that keeps them free when tracing is off.

Tracing follows the public call: ``traced_call`` (a Memory method, facade.py) decides from the
Memory's ``tracing`` config whether this call is traced and, if so, sets a context variable for
everything it runs. Every lower helper (``span``) reads that variable first and yields ``NO_SPAN``
when it is unset, so a call that is not traced imports nothing and creates nothing. The add's and
search's worker threads run with a copy of the caller's context (ingest/overlap.py, Memory's
search pool, AsyncMemory), so their spans join the call's trace.

Message text never reaches a span unless the config says ``include_text``: exception messages are
recorded with their quoted parts (where graphmem's errors and the servers' answers put values)
redacted, and the traceback is the frames' code lines, not the exception chain's messages.
"""

from __future__ import annotations

import re
import sys
import traceback
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from graphmem.errors import ConfigError

if TYPE_CHECKING:
    from opentelemetry.trace import Span as OtelSpan
    from opentelemetry.trace import Tracer

Kind = Literal["internal", "client", "server"]
#: the ``tracing.enabled`` setting: True, False, or "auto" (on when the application imported OpenTelemetry)
Enabled = bool | Literal["auto"]

INSTALL_HINT = "pip install 'graphmem[tracing]' (opentelemetry-api), plus an SDK and exporter to see the spans"
_QUOTED = re.compile(r"'(?:[^'\\\n]|\\.)*'|\"(?:[^\"\\\n]|\\.)*\"")
MAX_MESSAGE = 300


@dataclass(frozen=True)
class Tracing:
    """The settings of the traced call in progress (the Memory's ``tracing`` config)."""

    include_text: bool = False


_current: ContextVar[Tracing | None] = ContextVar("graphmem_tracing", default=None)
_tracer: Tracer | None = None


def wanted(enabled: Enabled) -> bool:
    """Whether a call of a Memory configured with ``enabled`` is traced. "auto": when the application
    has set a tracer provider (an SDK, or opentelemetry-instrument), which means it imported
    OpenTelemetry: a process that does not trace never pays for the import, and one that only has
    it imported (FastAPI and the MCP SDK import it) makes no spans that nobody records."""
    if enabled != "auto":
        return bool(enabled)
    api = sys.modules.get("opentelemetry.trace")
    if api is None:
        return False
    provider = api.get_tracer_provider()
    return not isinstance(provider, (api.ProxyTracerProvider, api.NoOpTracerProvider))


def require(enabled: Enabled) -> None:
    """``tracing.enabled: true`` without the extra is a ConfigError at start-up, not a silent no-op."""
    if enabled is True:
        try:
            import opentelemetry.trace  # noqa: F401
        except ImportError as exc:
            raise ConfigError(f"tracing.enabled is true but OpenTelemetry is not installed: {INSTALL_HINT}") from exc


def active() -> Tracing | None:
    """The settings of the traced call this code runs in, or None (then nothing is traced)."""
    return _current.get()


def redact(text: str) -> str:
    """``text`` with its quoted parts replaced (ids, names and message text travel quoted in
    graphmem's errors and in model servers' error bodies), cut to MAX_MESSAGE characters."""
    cleaned = _QUOTED.sub("<redacted>", text)
    return cleaned if len(cleaned) <= MAX_MESSAGE else cleaned[: MAX_MESSAGE - 3] + "..."


class Span:
    """A recording span, as much of it as graphmem's code needs (attributes, a new name, a failure)."""

    __slots__ = ("_span", "include_text")

    def __init__(self, span: OtelSpan | None, include_text: bool = False) -> None:
        self._span = span
        self.include_text = include_text

    @property
    def recording(self) -> bool:
        return self._span is not None

    def set(self, key: str, value: Any) -> None:
        if self._span is not None and value is not None:
            self._span.set_attribute(key, value)

    def update(self, attributes: Mapping[str, Any]) -> None:
        for key, value in attributes.items():
            self.set(key, value)

    def rename(self, name: str) -> None:
        if self._span is not None:
            self._span.update_name(name)

    def error(self, kind: str) -> None:
        """Status ERROR without an exception (a request answered 5xx)."""
        if self._span is not None:
            from opentelemetry.trace import Status, StatusCode

            self._span.set_attribute("error.type", kind)
            self._span.set_status(Status(StatusCode.ERROR))

    def fail(self, exc: BaseException) -> None:
        """Status ERROR and an ``exception`` event, its message redacted unless text is included."""
        if self._span is None:
            return
        from opentelemetry.trace import Status, StatusCode

        module, name = type(exc).__module__, type(exc).__qualname__
        kind = name if module in ("builtins", None) else f"{module}.{name}"
        message = str(exc) if self.include_text else redact(str(exc))
        frames = "".join(traceback.format_tb(exc.__traceback__))
        self._span.add_event("exception", {
            "exception.type": kind, "exception.message": message, "exception.escaped": True,
            "exception.stacktrace": f"Traceback (most recent call last):\n{frames}{kind}: {message}",
        })
        self._span.set_attribute("error.type", kind)
        self._span.set_status(Status(StatusCode.ERROR, f"{name}: {message}"))


NO_SPAN = Span(None)


@contextmanager
def span(name: str, attributes: Mapping[str, Any] | None = None, kind: Kind = "internal") -> Iterator[Span]:
    """A child span of the current one, when the call this runs in is traced; else ``NO_SPAN``."""
    settings = _current.get()
    if settings is None:
        yield NO_SPAN
        return
    with _started(name, attributes, kind, settings) as started:
        yield started


@contextmanager
def lazy_span(build: Callable[[], tuple[str, Mapping[str, Any]]], kind: Kind = "internal") -> Iterator[Span]:
    """``span(*build(), kind)``, with ``build`` called only when the span records (on hot paths:
    a statement or a request that is not traced builds no attributes)."""
    settings = _current.get()
    if settings is None:
        yield NO_SPAN
        return
    name, attributes = build()
    with _started(name, attributes, kind, settings) as started:
        yield started


@contextmanager
def traced_call(name: str, enabled: Enabled, include_text: bool, attributes: Mapping[str, Any]) -> Iterator[Span]:
    """A public call's span, and tracing for everything it runs; with tracing off (``enabled``),
    nothing inside it is traced, even when a traced call of another Memory runs it."""
    if not wanted(enabled):
        token = _current.set(None)
        try:
            yield NO_SPAN
        finally:
            _current.reset(token)
        return
    settings = Tracing(include_text)
    token = _current.set(settings)
    try:
        with _started(name, attributes, "internal", settings) as started:
            yield started
    finally:
        _current.reset(token)


@contextmanager
def _started(name: str, attributes: Mapping[str, Any] | None, kind: Kind, settings: Tracing) -> Iterator[Span]:
    from opentelemetry.trace import SpanKind

    kinds = {"internal": SpanKind.INTERNAL, "client": SpanKind.CLIENT, "server": SpanKind.SERVER}
    clean = {k: v for k, v in (attributes or {}).items() if v is not None}
    # graphmem records failures itself: the SDK's own record would carry the exception's text
    with _get_tracer().start_as_current_span(name, kind=kinds[kind], attributes=clean, record_exception=False,
                                             set_status_on_exception=False) as raw:
        started = Span(raw, settings.include_text)
        try:
            yield started
        except Exception as exc:
            started.fail(exc)
            raise


def _get_tracer() -> Tracer:
    """graphmem's tracer (a proxy until the application sets its provider, then the real one)."""
    global _tracer
    if _tracer is None:
        from importlib.metadata import PackageNotFoundError, version

        from opentelemetry import trace

        try:
            own = version("graphmem")
        except PackageNotFoundError:  # running from a source tree
            own = None
        _tracer = trace.get_tracer("graphmem", own)
    return _tracer
