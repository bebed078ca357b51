"""Planning a write for the embedded store: one GraphWrite becomes the list of operations (see
graph.py) that the store journals and then applies. Planning reads the graph and never changes it,
so a write that fails here (bad input) leaves nothing behind.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

import numpy as np

from graphmem.errors import InvalidInputError, StoreError
from graphmem.stores.embedded.conversations import message_attrs
from graphmem.stores.embedded.graph import MemoryGraph, Op, is_current
from graphmem.stores.embedded.memories import unit
from graphmem.types import GraphWrite, MemoryWrite, RelationWrite, iso, new_id, parse_time, turn_key

MEMORY_EVENTS = ("ADD", "UPDATE", "DELETE")


class WritePlanner:
    """Plans one write against ``graph``; ``vector`` checks an embedding's dimensions."""

    def __init__(self, graph: MemoryGraph, vector: Callable[[list[float]], np.ndarray]) -> None:
        self.graph = graph
        self.vector = vector

    def plan(self, w: GraphWrite) -> list[Op]:
        """Operations in the contract's order: invalidations, entities, relations, memories."""
        key, at = w.scope.key, _iso(w.at)
        ops: list[Op] = []
        retired: set[str] = set()
        for inv in w.invalidations:
            d = self.graph.edge(inv.relation_id)
            if d is None or d["scope"] != key or not is_current(d) or inv.relation_id in retired:
                continue  # another scope's, unknown or already retired: ignored by contract
            retired.add(inv.relation_id)
            ops.append(["retire", inv.relation_id, _iso(inv.invalid_at), at, w.add_id])
        ids = self._entities(w, at, ops)
        self._relations(w, at, ids, retired, ops)
        self._memories(w, at, ids, ops)
        if w.messages:
            first = self.graph.conversations.next_seq(key)
            logged = [message_attrs(m, first + i, w.add_id) for i, m in enumerate(w.messages)]
            ops.append(["messages", key, logged, w.keep_messages])
        if w.idempotency_key is not None:
            if w.idempotency_key in self.graph.import_keys:
                raise StoreError(f"import key {w.idempotency_key!r} was imported already; nothing was written")
            if w.idempotency_outcome is None:
                ops.append(["import_key", w.idempotency_key, key])
            else:  # the add's answer, journaled with it (ingest/idempotency.py)
                ops.append(["import_key", w.idempotency_key, key, w.idempotency_outcome])
        return ops

    def _entities(self, w: GraphWrite, at: str | None, ops: list[Op]) -> dict[str, str]:
        """Plan creates and touches; returns write id -> stored id.

        A touch names an entity of the scope by id (a cosine match may carry another canonical);
        a "new" entity whose canonical already exists (a concurrent add made it) becomes a touch.
        """
        g, key = self.graph, w.scope.key
        ids: dict[str, str] = {}
        planned: dict[str, str] = {}  # canonical -> stored id, within this write
        touched: set[str] = set()
        for e in w.entities:
            if not e.is_new and g.in_scope(e.id, key):
                stored: str | None = e.id
            else:
                stored = planned.get(e.canonical) or g.by_canonical.get((key, e.canonical))
            if stored is None:
                stored = new_id() if e.id in g.graph or e.id in touched else e.id
                entity: dict[str, Any] = {"id": stored, "name": e.name, "canonical": e.canonical, "entity_type": e.entity_type}
                entity.update(embedding=self.vector(e.embedding), mentions=1, created_at=at, updated_at=at)
                ops.append(["entity", {**entity, "scope": key, **w.scope.properties()}])
            elif stored not in touched:
                ops.append(["touch", stored, at])
            if e.attributes:
                ops.append(["attributes", stored, dict(e.attributes)])
            touched.add(stored)
            planned[e.canonical] = ids[e.id] = stored
        return ids

    def _relations(self, w: GraphWrite, at: str | None, ids: dict[str, str], retired: set[str], ops: list[Op]) -> None:
        key, written = w.scope.key, set(ids.values())
        planned: dict[tuple[str, str, str], str] = {}  # triple -> a current instance made by this write
        for r in w.relations:
            src, dst = ids.get(r.source_id, r.source_id), ids.get(r.destination_id, r.destination_id)
            for end in (src, dst):
                if end not in written and not self.graph.in_scope(end, key):
                    raise InvalidInputError(f"relation endpoint {end!r} is not an entity of the scope")
            triple = (src, r.relationship, dst)
            history = r.expired_at is not None  # a restored retired version: its own instance
            found = None if history else planned.get(triple) or self.graph.current_instance(*triple, skip=retired, ids=w.scope.full_key)
            fact = self._fact(r)
            if found:
                ops.append(["mention", found, w.add_id, at])
                bumped = self.graph.edge(found)
                if fact and bumped is not None and bumped.get("fact_embedding") is None:  # a version written before facts
                    ops.append(["relation_fact", found, *fact])
                continue
            rid = r.id
            ops.append(["relation", {
                "id": rid, "source_id": src, "destination_id": dst, "type": r.relationship,
                "valid_at": _iso(r.valid_at), "invalid_at": _iso(r.invalid_at), "created_at": _iso(r.created_at) or at,
                "updated_at": _iso(r.created_at) or at, "expired_at": _iso(r.expired_at), "mentions": 1,
                "provenance": list(r.provenance) or [w.add_id], "retired_by": r.retired_by, "scope": key,
                "ids": w.scope.full_key, **w.scope.properties(),
                "fact": fact[0] if fact else None, "fact_embedding": fact[1] if fact else None,
            }])  # fmt: skip
            if r.invalid_at is None and not history:
                planned[triple] = rid

    def _memories(self, w: GraphWrite, at: str | None, ids: dict[str, str], ops: list[Op]) -> None:
        """Plan memory ADD / UPDATE / DELETE in the order given.

        Ignored by contract: ids of another scope or unknown ones, UPDATE or DELETE of a
        soft-deleted memory, an ADD of an id that exists already, MENTIONS of entities outside
        the scope (entities this write creates are in it).
        """
        key, rows, written = w.scope.key, self.graph.memories.rows, set(ids.values())
        live: dict[str, bool] = {}  # memory id of the scope -> not soft-deleted, as this write goes on
        copies: dict[int, dict[str, Any]] = {}  # id(metadata) -> its JSON copy: an add's messages share one dict
        for m in w.memories:
            if m.event not in MEMORY_EVENTS:
                raise InvalidInputError(f"unknown memory event {m.event!r}; expected one of {', '.join(MEMORY_EVENTS)}")
            if m.id not in live and m.id in rows and rows[m.id]["scope"] == key:
                live[m.id] = rows[m.id]["deleted_at"] is None
            linked = dict.fromkeys(ids.get(i, i) for i in m.entity_ids)
            mentions = [e for e in linked if e in written or self.graph.in_scope(e, key)]
            if m.event == "ADD" and m.id not in live and m.id not in rows:
                ops.append(["memory", {
                    "id": m.id, "text": m.text, "hash": m.hash, "embedding": self._embedding(m),
                    "metadata": _copied(m.metadata or {}, copies), "role": m.role, "mentions": mentions,
                    "scope": key, **w.scope.properties(), "created_at": _iso(m.created_at) or at,
                    "updated_at": _iso(m.created_at) or at, "deleted_at": None,
                    "expires_at": _iso(m.expires_at),
                    **_said(m, w.at),
                    "valid_at": _iso(m.valid_at) or at, "invalid_at": None,
                }])  # fmt: skip
                live[m.id] = True
            elif m.event == "UPDATE" and live.get(m.id):
                changes: dict[str, Any] = {"text": m.text, "hash": m.hash, "embedding": self._embedding(m)}
                changes.update(updated_at=at, mentions=mentions, valid_at=_iso(m.valid_at) if m.valid_at else None)
                if m.metadata is not None:
                    changes["metadata"] = _json_object(m.metadata)
                if m.times is not None:
                    changes["times"] = [t.to_dict() for t in m.times]
                ops.append(["memory_update", m.id, changes])
            elif m.event == "DELETE" and live.get(m.id):
                ops.append(["memory_soft_delete", m.id, at, _iso(m.invalid_at) or at])
                live[m.id] = False

    def _fact(self, r: RelationWrite) -> tuple[str, np.ndarray] | None:
        """The relation's fact and unit fact embedding, when the write carries both."""
        if r.fact is None or r.fact_embedding is None:
            return None
        return r.fact, unit(self.vector(r.fact_embedding))

    def _embedding(self, m: MemoryWrite) -> np.ndarray:
        if m.embedding is None:
            raise InvalidInputError(f"memory {m.event} of {m.id!r} has no embedding")
        return unit(self.vector(m.embedding))


def _said(m: MemoryWrite, at: datetime) -> dict[str, Any]:
    """When a message memory was said, its place in the conversation, and its resolved times."""
    said_at = parse_time(m.said_at)
    return {
        "said_at": iso(said_at),
        "turn": None if said_at is None else turn_key(said_at, at, m.position),
        "times": [t.to_dict() for t in m.times or []],
    }


def _iso(value: datetime | None) -> str | None:
    return iso(parse_time(value))  # naive datetimes are UTC, never local time


def _copied(metadata: Any, copies: dict[int, dict[str, Any]]) -> dict[str, Any]:
    """_json_object, checked once per metadata object of a write; each row gets its own dict."""
    checked = copies.get(id(metadata))
    if checked is None:
        checked = copies[id(metadata)] = _json_object(metadata)
        return checked
    return copy.deepcopy(checked) if any(isinstance(v, (dict, list)) for v in checked.values()) else dict(checked)


def _json_object(metadata: Any) -> dict[str, Any]:
    """The metadata as it reads back after a restart (JSON), or a clear error before anything is written."""
    try:
        copied = json.loads(json.dumps(metadata, ensure_ascii=False, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"memory metadata must be JSON-serialisable: {exc}") from exc
    if not isinstance(copied, dict):
        raise InvalidInputError(f"memory metadata must be a JSON object, got {type(metadata).__name__}")
    return copied
