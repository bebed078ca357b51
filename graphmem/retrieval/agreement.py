"""Memories and relations agree in ranking: a memory fact that states a relation the graph has
since retired (invalidated, and perhaps replaced by a newer current relation of the same kind)
ranks below the memories that do not, and says so (with the newer relation when there is one); a
memory that states a current relation is offered with it.

Why: the two halves of search are ranked apart. Without this, "where do I live?" could rank the
memory "Lives in Boston" first while the graph's current relation says Denver: the agent gets two
answers and no way to tell which one the graph believes.

What a memory states: a relation whose destination's name is in the memory's words, whose source
is the scope's own user or named in it too, and whose relationship shares a word with it ("Lives in
Boston" states ``alice LIVES_IN Boston``; "Visited Boston" does not). Word matching (graphmem's
tokeniser, stems) rather than a model: search makes no model call. Verbatim memories (stored from
a message with ``infer=False``) are left alone: a message says what was said when it was said.

One more store read, only when the search found both inferred memories and relations: every
version (current and retired) around the best relations' endpoints that has one of their types or
ends at one of their destinations ("Works at Globex" is retired for "Quit Globex": another type,
the same place) (``search_graph`` with ``include_invalidated``, no vector or text seeds).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from graphmem.schema.facts import relationship_words
from graphmem.schema.filters import parse
from graphmem.stores.base import GraphQuery, GraphStore, relation_visible
from graphmem.types import MemoryItem, Relation, Scope, canonical_name, utcnow

#: the best relations whose kinds are checked (their relationship types around their sources)
CHECKED = 20
#: a superseded memory's score is this share of the lowest score of the memories kept above it
BELOW = 0.5


def agree(
    store: GraphStore,
    scope: Scope,
    memories: list[MemoryItem],
    relations: Sequence[Relation],
    embedding: list[float],
    as_of: datetime | None = None,
    known_at: datetime | None = None,
) -> list[MemoryItem]:
    """``memories`` with ``graph`` set where they state relations, superseded ones moved below the
    others (their score lowered to match, ``scores["superseded"]`` = 1)."""
    inferred = [m for m in memories if m.said_at is None]
    if not inferred or not relations:
        return memories
    versions = _versions(store, scope, relations[:CHECKED], embedding)
    now = utcnow()
    at = as_of or known_at or now
    current = {r.id: r for r in relations}
    retired: list[Relation] = []
    for r in versions:
        if relation_visible(r.valid_at, r.invalid_at, r.created_at, r.expired_at, as_of, known_at, now):
            current.setdefault(r.id, r)
        elif r.valid_at is None or r.valid_at <= at:  # ended before ``at`` (not one that starts later)
            retired.append(r)
    self_id = canonical_name(scope.self_name)
    superseded = [m for m in inferred if _mark(m, list(current.values()), retired, self_id)]
    return _below(memories, superseded)


def _versions(store: GraphStore, scope: Scope, relations: Sequence[Relation], embedding: list[float]) -> list[Relation]:
    kinds = sorted({r.relationship for r in relations})
    ends = sorted({r.destination for r in relations})
    seeds = sorted({canonical_name(name) for r in relations for name in (r.source, r.destination)})
    flt = parse({"OR": [{"relationship": {"in": kinds}}, {"destination_entity": {"in": ends}}]})
    query = GraphQuery(embedding, "", seeds, top_k=0, include_invalidated=True, hops=1, filters=flt, fact_top_k=0)
    return store.search_graph(scope, query)


def _mark(memory: MemoryItem, current: list[Relation], retired: list[Relation], self_id: str) -> bool:
    """Sets ``memory.graph``; True when what it states was superseded."""
    words = _words(memory.text)
    stated = [r for r in current if _states(words, r, self_id)]
    kinds_stated = {(r.source_id, r.relationship) for r in stated}
    for old in (r for r in retired if _states(words, r, self_id)):
        kind = (old.source_id, old.relationship)
        newer = [r for r in current if (r.source_id, r.relationship) == kind and r.destination_id != old.destination_id]
        if kind in kinds_stated:
            continue  # it also states the current one
        superseded: dict[str, str | None] = {"relation": old.id, "fact": _fact(old), "by": None, "current": None}
        if newer:
            by = max(newer, key=lambda r: (r.valid_at or r.created_at or utcnow()).timestamp())
            superseded.update(by=by.id, current=_fact(by))
        memory.graph = {"superseded": superseded}
        return True
    if stated:
        memory.graph = {"relations": [r.id for r in stated]}
    return False


def _words(text: str) -> set[str]:
    from graphmem.retrieval.text import tokenize

    return set(tokenize(text))


def _states(words: set[str], rel: Relation, self_id: str) -> bool:
    dest = _words(rel.destination)
    if not dest or not dest <= words:
        return False
    if canonical_name(rel.source) != self_id and not _words(rel.source) <= words:
        return False
    return bool(_words(relationship_words(rel.relationship)) & words)


def _fact(rel: Relation) -> str:
    return rel.fact or f"{rel.source} {relationship_words(rel.relationship)} {rel.destination}"


def _below(memories: list[MemoryItem], superseded: list[MemoryItem]) -> list[MemoryItem]:
    if not superseded:
        return memories
    gone = {id(m) for m in superseded}
    kept = [m for m in memories if id(m) not in gone]
    floor = min((m.score or 0.0 for m in kept), default=1.0)
    for m in superseded:
        m.scores["superseded"] = 1.0
        m.score = min(m.score or 0.0, floor) * BELOW
    return kept + superseded
