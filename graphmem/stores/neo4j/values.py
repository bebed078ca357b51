"""Values shared by the Neo4j store's statement builders: the Statement itself, the vector-search
plan, and conversions of times, vectors and Lucene text on the way in and out.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from graphmem.errors import StoreError
from graphmem.schema.resources import load_cypher
from graphmem.schema.words import STOPWORDS

#: LIMIT value standing for "no limit" (Cypher's LIMIT does not take null).
NO_LIMIT = 2**62

_LUCENE_SPECIAL = re.compile(r'([+\-!(){}\[\]^"~*?:\\/&|])')
_MAX_FULLTEXT_TERMS = 64
#: an English possessive ending a word ("Jordan's", "O’Brien’s"): Lucene's standard tokenizer keeps
#: "jordan's" one token, which never matches the name "jordan"
_POSSESSIVE = re.compile(r"['’]s\b", re.IGNORECASE)


PACKED = "p"
UNPACKED_PREFIXES = ("schema_", "partition_", "await_", "show_")
_PARAMETER = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


@functools.cache
def packed_text(name: str) -> str:
    """The statement's file with every ``$name`` read as ``$p.name`` (see Statement.run_args)."""
    return pack(load_cypher(name))


@functools.lru_cache(maxsize=256)
def pack(text: str) -> str:
    """``text`` with every ``$name`` read as ``$p.name``. Statements with their filters compiled in
    (resolve, search_graph, search_memories, single_pass_context, ...) were sent unpacked, so every
    add naming another number of entities, or a scope id of another length, planned resolve again
    (measured: 2.8-6.5 s per re-plan on a loaded 2-core machine, the slow adds after the first)."""
    return _PARAMETER.sub(lambda m: f"${PACKED}.{m.group(1)}", text)


@dataclass(frozen=True)
class Statement:
    """One Cypher file and the parameters to run it with."""

    name: str
    params: Mapping[str, Any] = field(default_factory=dict)
    text_override: str | None = None  # a file with checked names filled in, or with its filters compiled in
    pack: bool = False  # a text_override whose parameters are sent packed like a file's (filters.filtered)

    @property
    def text(self) -> str:
        return self.text_override if self.text_override is not None else load_cypher(self.name)

    @property
    def packed(self) -> bool:
        return (self.text_override is None or self.pack) and not self.name.startswith(UNPACKED_PREFIXES)

    def run_args(self) -> tuple[str, dict[str, Any]]:
        """The text and parameters sent to the server. Neo4j keys its plan cache on the parameters'
        types, with a size bucket for every list and string parameter: an add naming 3 entities
        after one naming 2, or a scope id of another length, recompiled write_graph (seconds on a
        busy server; the slow tail of adds). Sent as properties of one map parameter ``$p``, every
        statement keeps one plan. Schema and index statements (parameters in OPTIONS) go as written."""
        if not self.packed:
            return self.text, dict(self.params)
        text = packed_text(self.name) if self.text_override is None else pack(self.text_override)
        return text, {PACKED: dict(self.params)}


@dataclass(frozen=True)
class VectorPlan:
    """How scoped vector search uses the global index (see resolve.cypher)."""

    scan_limit: int = 2000  # scopes up to this many entities (or memories) are scanned exactly
    max_k: int = 4000  # cap on the oversampled k asked from the vector index
    match_k: int = 10  # neighbours wanted per candidate before oversampling (resolve.cypher)
    fulltext_k: int = 4  # fulltext hits asked per wanted hit, for those of other scopes or deleted
    partition_size: int = 5000  # a scope with more entities gets a vector index of its own (partition.py)


# --- values in and out --------------------------------------------------------------------------


def utc(value: datetime | None) -> datetime | None:
    """An aware UTC datetime: a naive one would become a LocalDateTime, which never compares."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


_DB_TIME = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,9}))?(Z|[+-]\d\d:\d\d)")


def from_db_time(value: Any) -> datetime | None:
    """A time read back: a driver DateTime, or the ISO text ``toString(datetime)`` gives. Statements
    on the add path return their times as text: the driver hydrates each DateTime in pure Python
    (~0.1 ms each; an add read ~65 of them)."""
    if value is None:
        return None
    if isinstance(value, str):
        match = _DB_TIME.fullmatch(value)
        if match is None:  # graphmem stores times as DateTime: this is not graphmem's data
            raise StoreError(f"the database returned {value!r} where a time was expected")
        zone = match.group(3)
        fraction = (match.group(2) or "").ljust(6, "0")[:6]
        return utc(datetime.fromisoformat(f"{match.group(1)}.{fraction}{'+00:00' if zone == 'Z' else zone}"))
    native = value.to_native() if hasattr(value, "to_native") else value
    return utc(native)


def limit_value(limit: int | None) -> int:
    return NO_LIMIT if limit is None else max(0, int(limit))


class Vector(list[float]):
    """An embedding as a statement parameter: a list with a short repr. The driver formats every
    RUN's parameters with repr() for its debug log even when debug logging is off (~0.1 s for a
    bulk batch of 1,000 vectors); the packer sends it as a plain list."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"<vector of {len(self)} floats>"


def vector(values: Sequence[float]) -> Vector:
    return Vector(map(float, values))


def lucene_escape(text: str) -> str:
    """Backslash-escape Lucene's query syntax. Lower case, so AND / OR / NOT stay plain words."""
    return _LUCENE_SPECIAL.sub(r"\\\1", text.lower())


def fulltext_terms(text: str, names: bool = False) -> str | None:
    """The query text as escaped Lucene terms, or None when it holds no letter or digit. With
    ``names`` (a search of entity names), a capitalised word with a possessive ("Jordan's") comes
    with its bare form too ("jordan"), as the embedded store matches a name (its word tokens split
    at the apostrophe): without it, "where does Jordan's sister live?" found no name on Neo4j and
    the two stores ranked differently. Lower-case contractions ("it's", "what's") stay whole. A
    memory search's text terms stay as they were: there the bare name ("caroline", which opens every
    turn its speaker said) only widened the pool with unrelated turns. A name search leaves out
    function words (schema.words.STOPWORDS): "what do I do at the club?" matched every name holding
    "the" ("the book fair", "The Daily")."""
    words: list[str] = []
    for word in text.split():
        if not any(ch.isalnum() for ch in word):
            continue
        if names and "".join(ch for ch in word if ch.isalnum()).casefold() in STOPWORDS:
            continue  # "the" must not match "the book fair" (the embedded store drops them too)
        words.append(word)
        bare = _POSSESSIVE.sub("", word)
        if names and bare != word and word[:1].isupper():  # the capital stays: the bare word is a word
            words.append(bare)
    if not words:
        return None
    return lucene_escape(" ".join(words[:_MAX_FULLTEXT_TERMS]))
