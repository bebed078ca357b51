"""What the retriever's second memory query asks for: the neighbouring messages of its best hits and
the memories whose resolved times fall in the question's range (GraphStore.memory_context)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from graphmem.schema.filters import Filter
from graphmem.types import MemoryItem


@dataclass
class ContextQuery:
    embedding: list[float]  # neighbours and dated memories are scored by cosine to it ("vector")
    ids: list[str] = field(default_factory=list)  # hits whose neighbouring messages are wanted
    before: int = 1  # messages before each hit, by turn order (same stored scope, eligible ones only)
    after: int = 1
    time_from: datetime | None = None  # with time_to: memories whose resolved times overlap [from, to)
    time_to: datetime | None = None
    time_k: int = 10  # the best ``time_k`` such memories by cosine
    filters: Filter | None = None  # as MemoryQuery.filters (only its metadata equalities: filters.equalities)
    as_of: datetime | None = None  # as MemoryQuery.as_of


@dataclass
class Neighbour:
    of: str  # the hit's id
    offset: int  # -1 the message just before the hit, +1 just after, -2 ...
    item: MemoryItem


@dataclass
class MemoryContext:
    neighbours: list[Neighbour] = field(default_factory=list)
    dated: list[MemoryItem] = field(default_factory=list)
