"""The embedded store's memory context query: neighbouring messages by turn order, and memories whose
resolved times overlap a range (GraphStore.memory_context)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable
from datetime import datetime
from typing import Any

import numpy as np

from graphmem.schema.filters import Filter, equalities
from graphmem.stores.embedded.memories import Attrs, MemoryFacts, memory_item, visible
from graphmem.stores.memory_context import ContextQuery, MemoryContext, Neighbour
from graphmem.types import MemoryItem, Scope, TimeSpan, parse_time


def context_matches(row: Attrs, flt: Filter | None) -> bool:
    """Metadata equalities only (graphmem.schema.filters.equalities), as the Neo4j store applies them."""
    pairs = equalities(flt)
    if pairs is None:
        return False
    meta = row["metadata"]
    return all(_kind_equal(meta.get(k), v) for k, v in pairs)


def _kind_equal(have: Any, want: Any) -> bool:
    return have is not None and isinstance(have, bool) == isinstance(want, bool) and have == want


def memory_context(facts: MemoryFacts, scope: Scope, query: ContextQuery, embedding: np.ndarray) -> MemoryContext:
    as_of = parse_time(query.as_of, field_name="as_of")

    def eligible(row: Attrs) -> bool:
        narrowed = all(row[k] == v for k, v in scope.narrowing.items())  # a user + run read: that run only
        return narrowed and visible(row, as_of) and context_matches(row, query.filters)

    out = MemoryContext()
    for hit_id in dict.fromkeys(query.ids):
        hit = facts.rows.get(hit_id)
        if hit is None or hit["scope"] != scope.key or hit["turn"] is None:
            continue
        turns = facts.turns(hit["scope"])
        at = bisect_left(turns, hit["turn"], key=lambda r: r["turn"])
        for step, count in ((-1, query.before), (1, query.after)):
            found, i = 0, at + step
            while found < count and 0 <= i < len(turns):
                if eligible(turns[i]):
                    found += 1
                    out.neighbours.append(Neighbour(hit_id, step * found, _scored(turns[i], embedding)))
                i += step
    if query.time_from is not None and query.time_to is not None and query.time_k > 0:
        out.dated = [_scored(r, embedding) for r in _dated(facts, scope, query, eligible)]
        out.dated.sort(key=lambda m: -(m.score or 0.0))
        del out.dated[query.time_k :]
    return out


def _dated(facts: MemoryFacts, scope: Scope, query: ContextQuery, eligible: Callable[[Attrs], bool]) -> list[Attrs]:
    start, end = parse_time(query.time_from), parse_time(query.time_to)
    assert start is not None and end is not None
    rows = (facts.rows[i] for i in facts.by_scope.get(scope.key, {}))
    return [r for r in rows if r["times"] and eligible(r) and _overlaps(r["times"], start, end)]


def _overlaps(times: list[dict[str, str]], start: datetime, end: datetime) -> bool:
    spans = (TimeSpan.from_dict(t) for t in times)
    return any(s.start < end and start < s.end for s in spans)


def _scored(row: Attrs, embedding: np.ndarray) -> MemoryItem:
    cosine = float(row["embedding"] @ embedding)
    return memory_item(row, cosine, {"vector": cosine})
