"""Idempotency keys of single adds: ``Memory.add(..., idempotency_key=...)``, REST's
``Idempotency-Key`` header and the MCP ``idempotency_key`` argument.

A keyed add stores, in the same commit as its graph and memories, an ``(:ImportKey)`` (embedded: a
journaled ``import_key`` op) whose key is a digest of the caller's scope and key and whose outcome
is the add's answer with a fingerprint of the request. A retry with the same key in the same scope:

- finds the outcome: the first answer is returned and nothing is written (across restarts: the
  outcome is in the store, not in the process);
- finds an outcome with another fingerprint: IdempotencyConflictError, nothing written;
- finds nothing (the first attempt failed, or its outcome was unknown and it did not commit): the
  add runs as new.

Two keyed adds racing: the scope lock serialises staged adds (the second sees the first's outcome
inside the lock); verbatim adds meet at the store's uniqueness rule, and the loser answers the
winner's outcome. The key never leaves the scope it was used in: another scope's same key is
another digest, so no tenant learns anything about another's keys.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphmem.errors import GraphMemError, IdempotencyConflictError, InvalidInputError, StoreError, WriteOutcomeUnknown
from graphmem.stores.base import GraphStore
from graphmem.types import GraphWrite, Scope, new_id, utcnow

Result = dict[str, Any]

#: Longest idempotency key accepted (characters): a UUID or a request hash fits many times over.
MAX_KEY_CHARS = 255


def checked_key(key: Any) -> str | None:
    """The key as given (None: no key), or InvalidInputError: a non-empty printable string of at
    most MAX_KEY_CHARS characters, valid Unicode."""
    if key is None:
        return None
    if not isinstance(key, str) or not key.strip():
        raise InvalidInputError("idempotency_key must be a non-empty string")
    if len(key) > MAX_KEY_CHARS:
        raise InvalidInputError(f"idempotency_key is longer than {MAX_KEY_CHARS} characters")
    if not key.isprintable():
        raise InvalidInputError("idempotency_key holds control characters")
    try:
        key.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError("idempotency_key holds a lone surrogate character") from exc
    return key


def fingerprint(scope: Scope, request: dict[str, Any]) -> str:
    """A digest of the request as given (messages, metadata, options), so a reused key with another
    payload is told apart from a retry. Times left to default (``timestamp`` None) are not in it."""
    text = json.dumps({"scope": scope.full_key, **request}, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def stored_key(scope: Scope, key: str) -> str:
    """What the store keeps: the scope and the key hashed together (never the raw key, and never
    equal to a bulk import's key, which is stored as given)."""
    digest = hashlib.sha256(json.dumps([scope.full_key, key], ensure_ascii=False).encode("utf-8")).hexdigest()
    return f"add:{digest}"


@dataclass
class Seal:
    """One keyed add: find the first outcome, or seal this add's answer into its write."""

    store: GraphStore
    key: str  # as the caller gave it (for messages)
    stored: str
    fingerprint: str
    settle: Callable[[], object]  # settle history rows set aside by an earlier attempt (History.settle)

    def replay(self) -> Result | None:
        """The first outcome of this key, or None when no add of it committed."""
        raw = self.store.idempotent_outcome(self.stored)
        if raw is None:
            return None
        record = json.loads(raw)
        if record.get("fingerprint") != self.fingerprint:
            raise IdempotencyConflictError(
                f"idempotency_key {self.key!r} was used before in this scope for a different request; nothing was written"
            )
        self.settle()  # an earlier attempt whose outcome was unknown committed: its history rows join now
        result: Result = record["result"]
        return result

    def apply(self, write: GraphWrite | None, scope: Scope, result: Result) -> GraphWrite:
        """Put the key and the answer into the add's write (one is made for an add that writes
        nothing else, so its answer is kept too); returns the write."""
        if write is None:  # under the add's own id, so provenance and history agree with its answer
            write = GraphWrite(add_id=result.get("add_id") or new_id(), scope=scope, at=utcnow())
        write.idempotency_key = self.stored
        answer = {k: v for k, v in result.items() if k != "usage"}
        write.idempotency_outcome = json.dumps({"fingerprint": self.fingerprint, "result": answer}, ensure_ascii=False,
                                               default=str)
        return write


def seal_for(store: GraphStore, scope: Scope, key: str | None, request: dict[str, Any],
             settle: Callable[[], object]) -> Seal | None:
    """The Seal of an add with ``key`` (None without one)."""
    key = checked_key(key)
    if key is None:
        return None
    return Seal(store, key, stored_key(scope, key), fingerprint(scope, request), settle)


def keyed(seal: Seal | None, run: Callable[[], Result]) -> Result:
    """Run the add unless its key committed already. A keyed add whose write lost a race at the
    store's uniqueness rule (the same key committed meanwhile) answers the winner's outcome."""
    if seal is None:
        return run()
    if (first := seal.replay()) is not None:
        return first
    try:
        return run()
    except WriteOutcomeUnknown:
        raise
    except StoreError:
        first = _replay_if_answering(seal)
        if first is None:
            raise
        return first


def _replay_if_answering(seal: Seal) -> Result | None:
    """The first outcome after a failed write; None when there is none or the store is away."""
    try:
        return seal.replay()
    except IdempotencyConflictError:
        raise
    except GraphMemError:
        return None
