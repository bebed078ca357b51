"""Cypher literals for text that graphmem writes into Cypher: the Browser URL and exported scripts.

Everywhere else values travel as parameters. Two places cannot use them: a Cypher script meant to be
loaded into another database, and the one statement `graphmem browse` pre-fills in Neo4j Browser
(Browser's `:param` lines only run as a multi-statement frame, which shows no result). There the
values become string literals, produced only by :func:`cypher_string`.

Cypher, like Java, turns ``\\uXXXX`` into its character *before* it reads the query (verified on
Neo4j 5.26): ``"\\u0022"`` ends the string. So quotes and backslashes are always escaped with a
backslash, never as ``\\uXXXX``; ``\\uXXXX`` is used only for characters that are harmless once
decoded. A backslash in the text becomes ``\\\\``, so a ``u`` after it never starts an escape.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timezone
from typing import Any

from graphmem.errors import InvalidInputError

_SHORT_ESCAPES = {"\\": "\\\\", '"': '\\"', "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f"}
#: Printable ASCII kept as is in a script (everything else in the string is escaped).
_SCRIPT_SAFE = frozenset(chr(c) for c in range(0x20, 0x7F)) - set(_SHORT_ESCAPES)
#: Kept as is in a URL-borne literal: no character Browser's URL parsing or `;` splitting reacts to.
_URL_SAFE_PUNCTUATION = frozenset(" _-.@:")
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _unicode_escape(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    code -= 0x10000  # outside the BMP: a UTF-16 surrogate pair, which Cypher joins back
    return f"\\u{0xD800 + (code >> 10):04x}\\u{0xDC00 + (code & 0x3FF):04x}"


def cypher_string(text: str, *, for_url: bool = False) -> str:
    """A double-quoted Cypher string literal that reads back as exactly ``text``.

    ``for_url=True`` (the Browser URL) keeps only letters, digits (any script) and ``space _ - . @ :``;
    every other character is escaped, so the literal holds no ``& # + % ; $ = >`` for Browser's URL
    and statement handling to trip on. Otherwise printable ASCII and printable non-ASCII letters stay.
    """
    if not isinstance(text, str):
        raise InvalidInputError(f"a Cypher string literal needs a str, got {type(text).__name__}")
    out = ['"']
    for ch in text:
        if ch in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[ch])
        elif for_url:
            out.append(ch if ch.isalnum() or ch in _URL_SAFE_PUNCTUATION else _unicode_escape(ch))
        elif ch in _SCRIPT_SAFE or (ord(ch) > 0x7F and ch.isprintable()):
            out.append(ch)
        else:
            out.append(_unicode_escape(ch))
    out.append('"')
    return "".join(out)


def cypher_identifier(name: str) -> str:
    """A backtick-quoted label, relationship type or property key (backticks doubled)."""
    if not isinstance(name, str) or not name:
        raise InvalidInputError("a Cypher identifier must be a non-empty string")
    if "\\" in name:  # Cypher decodes \uXXXX before reading, inside backticks too
        raise InvalidInputError(f"refusing a Cypher identifier with a backslash: {name!r}")
    return "`" + name.replace("`", "``") + "`"


def cypher_key(name: str) -> str:
    """A property key: bare when it is a plain identifier, else quoted."""
    return name if _IDENTIFIER.match(name) else cypher_identifier(name)


def cypher_value(value: Any, *, for_url: bool = False) -> str:
    """A Cypher literal for None, bool, int, float, str, datetime and lists of those."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInputError(f"no Cypher literal for the float {value!r}")
        return repr(value)
    if isinstance(value, str):
        return cypher_string(value, for_url=for_url)
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=timezone.utc)
        iso = moment.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")
        return f"datetime({cypher_string(iso, for_url=for_url)})"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(cypher_value(v, for_url=for_url) for v in value) + "]"
    raise InvalidInputError(f"no Cypher literal for {type(value).__name__}")


def cypher_map(properties: dict[str, Any]) -> str:
    """``{key: literal, ...}``, leaving out None values (Neo4j does not store nulls)."""
    items = [f"{cypher_key(k)}: {cypher_value(v)}" for k, v in properties.items() if v is not None]
    return "{" + ", ".join(items) + "}"


__all__ = ["cypher_identifier", "cypher_key", "cypher_map", "cypher_string", "cypher_value"]
