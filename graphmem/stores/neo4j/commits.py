"""Writes whose COMMIT was sent: committed, refused, or unknown, never a plain failure by guess.

A graceful Neo4j stop (a rolling restart, an upgrade) answers a COMMIT in flight with
``Neo.TransientError.General.DatabaseUnavailable`` or ``Transaction.Terminated`` although the
transaction may be in the log already (measured: 18 adds of 6 threads answered
StoreUnavailableError across two launcher stops, and were stored). The driver's managed
transactions then retry the whole transaction function: into a refused connection (a plain
failure of a write that happened), or into the store's uniqueness rule (a keyed add answering
its own first outcome after its history rows were dropped).

So a write transaction function is wrapped in ``Attempts``: once one attempt has returned (the
driver is sending COMMIT), a second attempt is refused instead of run, and whatever the write
then ends with is WriteOutcomeUnknown, unless the server refused the COMMIT for a reason of the
transaction itself (a ClientError such as a uniqueness violation found at commit: nothing was
written). The caller (ingest/commit.py) resolves the unknown outcome by reading the change back.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

import neo4j
from neo4j.exceptions import ClientError

from graphmem.errors import GraphMemError, WriteOutcomeUnknown

T = TypeVar("T")


class CommitWasSent(Exception):
    """Raised inside the driver's retry loop: an earlier attempt of this write reached COMMIT, so
    running it again could write it twice. Not a driver error, so the driver does not retry it."""


class Attempts(Generic[T]):
    """A transaction function that knows whether one of its attempts reached COMMIT."""

    def __init__(self, work: Callable[[neo4j.ManagedTransaction], T]) -> None:
        self.work = work
        self.committing = False

    def __call__(self, tx: neo4j.ManagedTransaction) -> T:
        if self.committing:
            raise CommitWasSent("an earlier attempt of this write sent COMMIT; its outcome is unknown")
        result = self.work(tx)
        self.committing = True  # the driver commits as soon as this returns
        return result


def refused(exc: BaseException) -> bool:
    """True when the server answered the COMMIT with a refusal of the transaction itself: it
    rolled back (a transient, terminated or unavailable answer proves nothing of the kind)."""
    return isinstance(exc, ClientError) and not _terminated(exc)


def _terminated(exc: ClientError) -> bool:
    # a stop terminates transactions, some of them after their commit reached the log
    return (exc.code or "").startswith("Neo.ClientError.Transaction.Terminated")


@contextmanager
def outcome_of(attempts: Attempts[Any] | None, where: str, describe: Callable[[BaseException], str]) -> Iterator[None]:
    """Turn a failure after COMMIT was sent into WriteOutcomeUnknown. ``attempts`` None: the block
    is one explicit ``tx.commit()`` (the COMMIT is sent by the block itself)."""
    try:
        yield
    except GraphMemError:
        raise
    except Exception as exc:
        sent = attempts is None or attempts.committing
        if not sent or refused(exc):
            raise
        raise WriteOutcomeUnknown(f"Neo4j at {where} failed while a write was committing: {describe(exc)}") from exc
