"""Checks of an add's arguments shared by ``Memory.add`` and ``Memory.add_many``'s items.

They live in the ingest layer, below the facade, so the bulk lanes can use them without importing
``graphmem.memory``.
"""

from __future__ import annotations

import json
import logging
from datetime import datetime
from typing import Any

from graphmem.errors import InvalidInputError
from graphmem.schema import limits
from graphmem.schema.filters import check_metadata_key
from graphmem.types import parse_time, utcnow

log = logging.getLogger("graphmem.memory")  # the facade's logger: where users look for add warnings


def reference_time(timestamp: Any) -> datetime:
    """When the messages were said. Documented rule: a timestamp in the future (a client clock
    ahead, a naive local time read as UTC) is clamped to now, since nothing was said later than now."""
    now = utcnow()
    when = parse_time(timestamp) or now
    if when > now:
        log.warning("timestamp %s is in the future; using now (%s)", when.isoformat(), now.isoformat())
        return now
    return when


def checked_metadata(metadata: Any) -> dict[str, Any]:
    """Metadata must be a JSON object with string keys, within the limits of graphmem.schema.limits
    (depth, size, top-level keys, key rules); checked before anything is written, so nothing stored
    can make a later read fail. Keys that share a built-in field's name (``user_id``, ``memory``, ...)
    are kept and filtered as ``metadata.<key>``."""
    if metadata is None:
        return {}
    if not isinstance(metadata, dict) or not all(isinstance(k, str) for k in metadata):
        raise InvalidInputError("metadata must be a dict with string keys")
    limits.too_long("metadata", len(metadata), limits.METADATA_KEYS, "top-level keys")
    limits.json_shape("metadata", metadata, limits.METADATA_DEPTH, limits.METADATA_CHARS)
    try:
        text = json.dumps(metadata, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
        text.encode("utf-8")  # a lone surrogate cannot be stored as text by either store
        checked: dict[str, Any] = json.loads(text)  # a JSON object: the text is a dump of a dict
    except UnicodeEncodeError as exc:
        raise InvalidInputError("metadata holds a lone surrogate character (not valid Unicode text)") from exc
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"metadata is not JSON-serialisable: {exc}") from exc
    limits.too_long("metadata as JSON", len(text), limits.METADATA_CHARS)
    for key in checked:  # keys a filter could not name are refused with the filter's message
        check_metadata_key(key, f"metadata.{key}")
    return checked
