"""The infer=False add: each message stored verbatim as a memory, no model request.

``Memory.add(infer=False)`` and the bulk lanes (verbatim.py) build the same write here, so a
verbatim add reads the same whether it came alone or in a batch of ``add_many``. The host is the
memory being written (``BulkHost``: its store, embedder, history log and retention).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from graphmem.ingest.add import AddOutcome, log_messages
from graphmem.ingest.bulk_host import BulkHost
from graphmem.ingest.commit import commit_add, nothing_added
from graphmem.ingest.idempotency import Seal
from graphmem.ingest.messages import verbatim_messages
from graphmem.retrieval.when import annotate_times
from graphmem.stages.conversation import Message
from graphmem.types import GraphWrite, MemoryWrite, Scope, new_id, utcnow


def add_verbatim(
    host: BulkHost, scope: Scope, messages: Any, metadata: dict[str, Any], reference_time: datetime,
    expiration_date: Any = None, key: str | None = None, seal: Seal | None = None,
) -> dict[str, Any]:
    """One infer=False add of checked arguments: one embedding call, one transaction."""
    parsed = verbatim_messages(messages)
    if not parsed:
        return nothing_added(host.store, host.history_log, scope, seal)
    vectors = host.embedder.embed([m.content for m in parsed])
    outcome = verbatim_outcome(host, scope, parsed, vectors, metadata, reference_time, expiration_date, key)
    result: dict[str, Any] = {"add_id": outcome.add_id, "results": outcome.results(), "relations": []}
    if seal is not None:  # the answer a retry with the same key gets is written with the add
        outcome.write = seal.apply(outcome.write, scope, result)
    commit_add(host.store, host.history_log, outcome, host.config.context.max_messages, seal.key if seal else None)
    host._retention.maybe_purge()  # logged, so the next infer=True add's summary covers these messages too
    return result


def verbatim_outcome(
    host: BulkHost, scope: Scope, parsed: list[Message], vectors: list[list[float]], metadata: dict[str, Any],
    reference_time: datetime, expiration_date: Any, key: str | None,
) -> AddOutcome:
    """The write of an infer=False add: each message a memory, user and assistant ones logged."""
    outcome = AddOutcome(add_id=new_id())
    write = GraphWrite(add_id=outcome.add_id, scope=scope, at=utcnow(), keep_messages=host.config.context.max_messages,
                       idempotency_key=key)
    write.memories = [
        MemoryWrite("ADD", new_id(), m.content, v, metadata, m.role, said_at=reference_time, position=i,
                    valid_at=reference_time)
        for i, (m, v) in enumerate(zip(parsed, vectors, strict=True))
    ]
    annotate_times(write.memories, reference_time)
    write.messages = log_messages([m for m in parsed if m.role in ("user", "assistant")], reference_time)
    outcome.write = write
    host._retention.stamp(write, expiration_date)
    return outcome
