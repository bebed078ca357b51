"""The shapes of what the public API returns (mem0's shapes), as TypedDicts, and the memory events.

They type the dicts ``Memory`` returns so a caller's type checker sees a misspelt key, without
changing what is returned at run time (plain dicts, JSON-ready: times are ISO-8601 strings).
"""

# No ``from __future__ import annotations`` here: TypedDict reads NotRequired at run time.
import sys
from typing import Any, Literal, TypedDict

from graphmem.llm.usage import Usage

if sys.version_info >= (3, 11):
    from typing import NotRequired
else:  # pragma: no cover - Python 3.10
    from typing_extensions import NotRequired

#: What an add or an update did to one memory (mem0's events; "NONE" is never returned).
MemoryEvent = Literal["ADD", "UPDATE", "DELETE"]
MEMORY_EVENTS: tuple[MemoryEvent, ...] = ("ADD", "UPDATE", "DELETE")


class MemoryResult(TypedDict):
    """One memory fact: ``results`` items of add / search / get_all, and ``get``."""

    id: str
    memory: str
    hash: str
    metadata: dict[str, Any]
    created_at: str | None
    updated_at: str | None
    user_id: NotRequired[str]
    agent_id: NotRequired[str]
    run_id: NotRequired[str]
    role: NotRequired[str]
    deleted_at: NotRequired[str]
    valid_at: NotRequired[str]  # event time: when it was said (the add's timestamp)
    invalid_at: NotRequired[str]  # event time it stopped being true (retired by the update stage)
    score: NotRequired[float]  # search only
    scores: NotRequired[dict[str, float]]  # search only: the per-signal scores before fusion
    said_at: NotRequired[str]  # stored from a message (infer=False): when it was said
    times: NotRequired[list[dict[str, str | None]]]  # its resolved time expressions {text, start, end, period}
    context: NotRequired[list[dict[str, Any]]]  # search with neighbours_as="context": neighbouring messages
    offset: NotRequired[int]  # a context item: -1 the message before its hit, +1 after
    graph: NotRequired[dict[str, Any]]  # search only: the relations it states, or the newer one superseding it


class AddedMemory(TypedDict):
    """One ``results`` item of add: what the add did to a memory (mem0's add shape)."""

    id: str
    memory: str
    event: MemoryEvent
    previous_memory: NotRequired[str]  # UPDATE: the text it replaced


class RelationProvenance(TypedDict):
    """Which adds a relation version came from: ``added_by`` the adds that asserted it, oldest first
    (the first created it), ``retired_by`` the add that retired it (None while current). An add id
    names the add's logged messages (``timeline``/Browser ``provenance`` view) and its memory history
    rows (``history``)."""

    added_by: list[str]
    retired_by: str | None


class RelationResult(TypedDict):
    """One relation instance with both time axes: ``relations`` items."""

    id: str
    source: str
    relationship: str
    destination: str
    valid_at: str | None
    invalid_at: str | None
    created_at: str | None
    expired_at: str | None
    mentions: int
    score: NotRequired[float]
    scores: NotRequired[dict[str, float]]
    source_type: NotRequired[str]  # the endpoints' entity types and ontology attributes, when known
    destination_type: NotRequired[str]
    source_attributes: NotRequired[dict[str, Any]]
    destination_attributes: NotRequired[dict[str, Any]]
    event: NotRequired[str]  # add only: what the add did to it
    hops: NotRequired[int]  # search(hops=2): a relation found two hops from a seed entity
    path: NotRequired[list[dict[str, str]]]  # ... and the steps from the seed {source, relationship, destination}
    fact: NotRequired[str]  # the triple in words with entity types and time (graphmem.schema.facts)
    provenance: NotRequired[RelationProvenance]  # the adds that asserted and retired this version


class SearchResult(TypedDict):
    """search and get_all: memory facts and relations."""

    results: list[MemoryResult]
    relations: list[RelationResult]


class AddResult(TypedDict):
    """add: its id (``provenance(add_id)``, a relation's ``provenance``, the history rows it wrote),
    what it did to memories, and the relations it wrote, touched or invalidated, and what it asked
    of the model and the embedder (graphmem.llm.usage)."""

    add_id: str
    results: list[AddedMemory]
    relations: list[RelationResult]
    usage: Usage


class HistoryRow(TypedDict):
    """One change of a memory, as ``history(memory_id)`` lists them (mem0's columns)."""

    id: str
    memory_id: str
    old_memory: str | None
    new_memory: str | None
    event: MemoryEvent
    created_at: str
    updated_at: str | None
    is_deleted: bool
    actor_id: str | None
    role: str | None
    user_id: str | None
    agent_id: str | None
    run_id: str | None
    add_id: str | None  # the add (or update, delete) that made the change: ``provenance(add_id)``; None: imported


__all__ = ["MEMORY_EVENTS", "AddResult", "AddedMemory", "HistoryRow", "MemoryEvent", "MemoryResult", "RelationProvenance", "RelationResult",
           "SearchResult"]
