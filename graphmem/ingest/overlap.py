"""The staged add's last two model requests, overlapped (docs/add-modes.md, "What runs at once").

The memory-update stage must see what the invalidation stage retires (graph-guided consolidation:
memories stating a retired relation are shown marked no longer true, and memories mentioning its
endpoints are candidates too), so in sequence an add waits for three model round trips: extraction,
invalidation, update. Here the invalidation request starts on the add's pool and the memory update
starts beside it for the likeliest outcome of the invalidation, known before it answers
(``likely_retired``): the existing relations a new relation replaces (same source and relationship,
another destination: "lives in Denver" over "lives in Boston", the rule a careful model follows for
single-valued relations) and the relations of an existing entity the messages name but relate to
nothing new ("Biscuit passed away": named because something about it ended), or nothing.

When the invalidation answers, the early memory update is used if its request showed exactly what a
sequential add would have shown: the guess was right, or the model retired something else whose
memory candidates and "no longer true" marks are the same. Otherwise the memory update is asked again
with what was retired, as in sequence. So the memories always agree with the graph and a guess only
decides how long the add waits; the add stays within DESIGN's four model requests unless a guess was
wrong (then five). Every request made is waited for before the add goes on, so the add's usage
counts each one (an unused early request included), and an error of the request that is used (or of
the invalidation) is raised as the sequential add would raise it. Store reads run on the calling
thread (the one holding the scope's lock); the pool only runs model requests.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

from graphmem.stages.graph_extraction import ExtractedRelation
from graphmem.stages.memory_update import Decision
from graphmem.types import EntityWrite, MemoryItem, Relation

log = logging.getLogger(__name__)
T = TypeVar("T")

Decided = tuple[list[Decision], int]
Shown = tuple[list[MemoryItem], dict[str, list[Relation]]]


def submit(pool: Executor, fn: Callable[..., T], *args: Any) -> Future[T]:
    """``fn(*args)`` on the pool, with the caller's context (the add's usage meter goes with it)."""
    return pool.submit(contextvars.copy_context().run, fn, *args)


def settle(*futures: Future[Any]) -> None:
    """Wait for requests whose answer is not used (their usage is the add's); their errors are moot."""
    for future in futures:
        try:
            future.result()
        except Exception as exc:  # noqa: BLE001 - an unused answer's failure changes nothing
            log.debug("an unused speculative request failed: %s", exc)


def likely_retired(
    existing: list[Relation], new: list[ExtractedRelation], entities: dict[str, EntityWrite], self_key: str = ""
) -> list[Relation]:
    """The existing relations that a new relation replaces (same source and relationship, another
    destination), and those of an existing entity the messages name without relating it to anything
    ("Biscuit passed away", "no more sushi": named because something about it ended). A guess for
    the speculation only; the model decides what is retired."""
    replaced = {(entities[r.source].id, r.relationship) for r in new}
    asserted = {(entities[r.source].id, r.relationship, entities[r.destination].id) for r in new}
    related = {k for r in new for k in (r.source, r.destination)}
    named_only = {e.id for k, e in entities.items() if not e.is_new and k not in related and k != self_key}
    return [r for r in existing if (r.source_id, r.relationship, r.destination_id) not in asserted
            and ((r.source_id, r.relationship) in replaced or r.source_id in named_only or r.destination_id in named_only)]


def retire_and_decide(
    pool: Executor,
    retire: Callable[[], tuple[list[Relation], int]],
    guess: list[Relation],
    inputs: Callable[[list[Relation]], Shown],
    decide: Callable[[Shown], Decided],
) -> tuple[list[Relation], int, Decided]:
    """The invalidation (``retire``) and the memory update (``decide`` of ``inputs(retired)``), the
    update started for ``guess`` beside the invalidation; see the module docstring. ``inputs``
    reads the store (on this thread); ``decide`` only asks the model."""
    invalidating = submit(pool, retire)
    try:
        shown = inputs(guess)
        early = submit(pool, decide, shown)
    except BaseException:
        settle(invalidating)
        raise
    try:
        retired, dropped = invalidating.result()
    except BaseException:
        settle(early)
        raise
    if _key(retired) == _key(guess):
        log.debug("the memory update asked beside the invalidation is used (the guess held)")
        return retired, dropped, early.result()
    actual = inputs(retired)
    if _shown_key(actual) == _shown_key(shown):  # another retirement, the same request
        log.debug("the memory update asked beside the invalidation is used (it showed the same)")
        return retired, dropped, early.result()
    settle(early)
    log.debug("the invalidation retired what the guess did not: the memory update is asked again")
    return retired, dropped, decide(actual)


def _key(relations: list[Relation]) -> frozenset[str]:
    return frozenset(r.id for r in relations)


def _shown_key(shown: Shown) -> tuple[tuple[str, ...], frozenset[tuple[str, frozenset[str]]]]:
    """What a memory-update request shows: its candidates and, per candidate, the retired relations
    it is marked with (two requests with equal keys are the same request)."""
    candidates, stale = shown
    return tuple(m.id for m in candidates), frozenset((k, _key(v)) for k, v in stale.items())


__all__ = ["likely_retired", "retire_and_decide", "settle", "submit"]
