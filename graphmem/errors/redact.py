"""Secrets out of everything graphmem shows: messages, logs, reprs, reports, error bodies.

A model's ``base_url`` or a Neo4j ``url`` may carry credentials (``http://user:pass@host/v1``), a
URL may carry a key in its query (``?api-key=...``), an SDK may echo a bearer token or an ``sk-``
key. graphmem never shows them: every :class:`~graphmem.errors.GraphMemError` text passes through
:func:`redact_text`, config reprs through :func:`redact_value`, and the log records of graphmem's
processes (and of the HTTP clients it drives) through :class:`RedactingFilter`.

Imports nothing of graphmem, so the exceptions (this package's __init__) and everything above can use it.
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import urlsplit, urlunsplit

MASK = "***"

#: ``scheme://userinfo@``: the userinfo runs to the last ``@`` before the host ends (a raw ``@`` in
#: a password is common in hand-written configs), never across ``/ ? #``, whitespace or quotes.
_USERINFO = re.compile(r"(?P<scheme>\b[a-zA-Z][a-zA-Z0-9+.\-]*://)[^/?#\s'\"<>]*@")
#: a query parameter whose name says it is a credential (Azure's api-key, Gemini's key, SAS sig, ...)
_QUERY_SECRET = re.compile(
    r"(?P<name>[?&;](?:api[-_]?key|key|access[-_]?token|token|secret|password|passwd|sig|signature|auth)=)[^&#\s'\"<>]*",
    re.IGNORECASE)
_BEARER = re.compile(r"(?P<name>\b(?:Bearer|Basic)\s+)[A-Za-z0-9._~+/=\-]{6,}", re.IGNORECASE)
#: OpenAI-style keys (sk-..., sk-proj-...) wherever an SDK or a server echoes one
_KEY = re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}")
#: config keys whose values are secrets whatever they look like
_SECRET_NAME = re.compile(r"(?:^|_)(?:api_?key|key|password|passwd|secret|token)$", re.IGNORECASE)


def redact_url(url: str) -> str:
    """The URL without its user:password part (and without credential query values)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<invalid url>"
    if "@" in parts.netloc:
        parts = parts._replace(netloc=parts.netloc.rsplit("@", 1)[1])
    return _QUERY_SECRET.sub(lambda m: m.group("name") + MASK, urlunsplit(parts))


def redact_text(text: str) -> str:
    """``text`` with every credential it may carry masked: URL userinfo (dropped, as in
    :func:`redact_url`), credential query values, bearer/basic tokens and ``sk-`` keys."""
    if not text:
        return text
    text = _USERINFO.sub(lambda m: m.group("scheme"), text)
    text = _QUERY_SECRET.sub(lambda m: m.group("name") + MASK, text)
    text = _BEARER.sub(lambda m: m.group("name") + MASK, text)
    return _KEY.sub("sk-" + MASK, text)


def is_secret_name(name: str) -> bool:
    """A config key whose value is a secret (api_key, password, token, ...)."""
    return bool(_SECRET_NAME.search(name))


def redact_value(name: str | None, value: Any) -> Any:
    """A config value as a repr may show it: secrets by name masked, strings redacted, dicts and
    lists walked (a config's free-form ``config`` dicts hold keys and URLs)."""
    if name is not None and is_secret_name(name) and value is not None:
        return "**********"
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: redact_value(k if isinstance(k, str) else None, v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(redact_value(None, v) for v in value)
    return value


class RedactingFilter(logging.Filter):
    """Rewrites a record's message (and its traceback text) without secrets; drops nothing."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is logging's to report, not ours
            return True
        clean = redact_text(message)
        if clean != message:
            record.msg, record.args = clean, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_text(record.exc_text)
        return True


#: the loggers of the HTTP clients graphmem drives (the openai SDK runs on httpx or httpx2): they log request URLs
CLIENT_LOGGERS = ("httpx", "httpx2", "httpcore", "httpcore2", "openai")


def guard_logger(logger: logging.Logger | logging.Handler) -> None:
    """Add one RedactingFilter to a logger (records created there) or a handler (records it emits)."""
    if not any(isinstance(f, RedactingFilter) for f in logger.filters):
        logger.addFilter(RedactingFilter())


def guard_client_logs() -> None:
    """Redact what the HTTP client libraries log (httpx logs each request's URL at INFO)."""
    for name in CLIENT_LOGGERS:
        guard_logger(logging.getLogger(name))


def guard_process_logs() -> None:
    """For a graphmem process (CLI, servers): every record that reaches the root logger's handlers,
    or Python's last-resort stderr handler, is redacted, whoever logged it."""
    for handler in logging.getLogger().handlers:
        guard_logger(handler)
    if logging.lastResort is not None:
        guard_logger(logging.lastResort)
    guard_client_logs()


__all__ = ["MASK", "RedactingFilter", "guard_client_logs", "guard_logger", "guard_process_logs", "is_secret_name",
           "redact_text", "redact_url", "redact_value"]
