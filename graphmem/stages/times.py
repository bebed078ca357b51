"""Dates the LLM gives are untrusted text: parse what is a real ISO-8601 date, refuse the rest."""

from __future__ import annotations

import logging
from datetime import datetime

from graphmem.types import to_utc

log = logging.getLogger(__name__)


def parse_llm_time(value: object) -> datetime | None:
    """An aware UTC datetime for an ISO-8601 date or date-time string; None for anything else.

    Rules (README: time handling): a date without a time is midnight UTC; a time without a zone is
    UTC; impossible dates ("2024-13-45") and words ("soon") give None, which the pipeline treats as
    "unknown" (valid_at then falls back to the reference time, invalid_at stays open).
    """
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        return to_utc(datetime.fromisoformat(text))
    except (ValueError, OverflowError):  # OverflowError: outside years 1-9999 once taken to UTC
        log.info("ignoring unparseable date from the model: %r", value[:50])
        return None
