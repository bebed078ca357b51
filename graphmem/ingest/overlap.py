"""The staged add's last two model requests, overlapped (docs/add-modes.md, "What runs at once").

The memory-update stage must see what the invalidation stage retires (graph-guided consolidation:
memories stating a retired relation are shown marked no longer true, and memories mentioning its
endpoints are candidates too), so in sequence the two requests are three model round trips after
extraction's one. Here the invalidation request starts at once on the add's pool, and the memory
update starts beside it for the likeliest outcomes of the invalidation, known before it answers:

- nothing is retired;
- the existing relations a new relation replaces: same source and relationship, another destination
  ("lives in Denver" over "lives in Boston"), the rule a careful model follows for single-valued
  relations (``likely_retired``).

When the invalidation answers, the memory update whose retirements are exactly those retired is
used: its request saw precisely what a sequential add would have shown. Otherwise (the model
retired something else) the memory update runs again with what was retired, as in sequence. So the
memories always agree with the graph; a guess only decides how long the add waits. Every request
made is waited for before the add goes on, so the add's usage counts each one (a speculative request
that was not used included), and an error of the request that is used (or of the invalidation) is
raised as the sequential add would raise it. Store reads run on the calling thread (the one holding
the scope's lock); the pool only runs model requests.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Callable, Hashable
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

from graphmem.stages.graph_extraction import ExtractedRelation
from graphmem.stages.memory_update import Decision
from graphmem.types import EntityWrite, Relation

log = logging.getLogger(__name__)
T = TypeVar("T")

Decided = tuple[list[Decision], int]


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


def likely_retired(existing: list[Relation], new: list[ExtractedRelation], entities: dict[str, EntityWrite]) -> list[Relation]:
    """The existing relations that a new relation replaces: same source and relationship, another
    destination (a guess for the speculation only; the model decides what is retired)."""
    replaced = {(entities[r.source].id, r.relationship) for r in new}
    asserted = {(entities[r.source].id, r.relationship, entities[r.destination].id) for r in new}
    return [r for r in existing if (r.source_id, r.relationship) in replaced
            and (r.source_id, r.relationship, r.destination_id) not in asserted]


def retire_and_decide(
    pool: Executor,
    retire: Callable[[], tuple[list[Relation], int]],
    guesses: list[list[Relation]],
    inputs: Callable[[list[Relation]], T],
    decide: Callable[[T], Decided],
) -> tuple[list[Relation], int, Decided]:
    """The invalidation (``retire``) and the memory update (``decide`` of ``inputs(retired)``), the
    update started for each distinct guess beside the invalidation; see the module docstring.
    ``inputs`` reads the store (on this thread); ``decide`` only asks the model."""
    invalidating = submit(pool, retire)
    early: dict[Hashable, Future[Decided]] = {}
    try:
        for guess in guesses:
            key = _key(guess)
            if key not in early:
                early[key] = submit(pool, decide, inputs(guess))
        retired, dropped = invalidating.result()
    except BaseException:
        settle(invalidating, *early.values())
        raise
    chosen = early.pop(_key(retired), None)
    log.debug("memory update asked beside the invalidation for %d outcome(s): %s", len(early) + (chosen is not None),
              "one was what it retired" if chosen is not None else "none was, asked again")
    settle(*early.values())
    if chosen is None:  # the model retired something no guess had: decide with what it retired
        return retired, dropped, decide(inputs(retired))
    return retired, dropped, chosen.result()


def _key(relations: list[Relation]) -> frozenset[str]:
    return frozenset(r.id for r in relations)


__all__ = ["likely_retired", "retire_and_decide", "settle", "submit"]
