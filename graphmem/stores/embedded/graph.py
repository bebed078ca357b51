"""The embedded store's in-memory state: a networkx MultiDiGraph plus the indexes kept beside it,
and the memory facts (memories.py).

Nodes are entities and edges are relation instances keyed by relation id, with the same
properties as the Neo4j model. The state changes only through :meth:`MemoryGraph.apply`, which
takes the JSON-ready operations the store journals, so a live change and its replay are the same
code:

    ["entity", {attrs}]                       create an entity
    ["touch", entity_id, at]                  one more mention
    ["attributes", entity_id, {name: value}]  set ontology attribute values (validated names)
    ["relation", {attrs}]                     create a relation instance
    ["mention", relation_id, add_id, at]      one more mention, add_id joins the provenance
    ["relation_fact", relation_id, fact, embedding]  the version's fact text and unit embedding (reindex, a bump)
    ["retire", relation_id, invalid_at, expired_at, add_id?]  add_id: the add that retired it (absent in old journals)
    ["memory", {attrs}]                       create a memory fact (with its MENTIONS entity ids)
    ["memory_update", memory_id, {changes}]   text, hash, embedding, updated_at, metadata?, mentions
    ["memory_soft_delete", memory_id, at, invalid_at?]  deleted_at = at, invalid_at (event time; absent in old journals)
    ["memory_remove", memory_id]              gone for good
    ["messages", scope_key, [attrs], keep]    append to the conversation log (conversations.py)
    ["summary", scope_key, text, through, at] the scope's rolling summary
    ["delete_scope", scope_key]               entities, relations, memories and log of the scope
    ["purge", ...], ["forget", ...]           retention and erasure (lifecycle.py)
    ["relation_remove", relation_id]          gone for good (delete_all of a narrowed scope)
    ["reset"]
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import chain
from typing import Any

import networkx as nx
import numpy as np

from graphmem.schema import filters
from graphmem.schema.filters import Filter
from graphmem.stores.embedded.conversations import ConversationLogs
from graphmem.stores.embedded.facts import FactIndexes
from graphmem.stores.embedded.journal import as_vector
from graphmem.stores.embedded.memories import MemoryFacts
from graphmem.types import Entity, Relation, iso, parse_time

TIME_FIELDS = frozenset(
    {"created_at", "updated_at", "valid_at", "invalid_at", "expired_at", "deleted_at", "expires_at", "said_at"}
)
WORD = re.compile(r"\w+")
Op = list[Any]
Attrs = dict[str, Any]


@dataclass
class ScopeIndex:
    """Per-scope lookup tables, rebuilt lazily after the scope's entities change."""

    ids: list[str]
    matrix: np.ndarray  # one L2-normalised embedding row per entity
    tokens: list[frozenset[str]]  # word tokens of each canonical name


class MemoryGraph:
    """Entities, relations and memory facts of every scope, with lookups by canonical name, scope and id."""

    def __init__(self, embedding_dims: int) -> None:
        self.embedding_dims = embedding_dims
        self.clear()

    def clear(self) -> None:
        self.graph: nx.MultiDiGraph[str] = nx.MultiDiGraph()
        self.by_canonical: dict[tuple[str, str], str] = {}  # (scope key, canonical) -> entity id
        self.by_scope: dict[str, dict[str, None]] = {}  # scope key -> ordered set of entity ids
        self._ends: dict[str, tuple[str, str]] = {}  # relation id -> (source id, destination id)
        self._indexes: dict[str, ScopeIndex] = {}
        self.facts = FactIndexes(self.embedding_dims)
        self.memories = MemoryFacts(self.embedding_dims)
        self.conversations = ConversationLogs()
        self.import_keys: dict[str, str] = {}  # idempotency key of an imported add -> its scope key
        self.key_outcomes: dict[str, str] = {}  # idempotency key of add(idempotency_key=...) -> its stored answer
        self._seq = 0  # insertion order, the tie-break of "oldest first"

    # --- changes ----------------------------------------------------------------------------

    def apply(self, ops: Iterable[Op]) -> None:
        for kind, *args in ops:
            getattr(self, f"_op_{kind}")(*args)

    def _op_entity(self, data: Attrs) -> None:
        attrs = self._decode(data)
        attrs["embedding"] = as_vector(attrs["embedding"])  # compact, unlike a list
        self.graph.add_node(attrs["id"], **attrs)
        self.by_canonical[(attrs["scope"], attrs["canonical"])] = attrs["id"]
        self.by_scope.setdefault(attrs["scope"], {})[attrs["id"]] = None
        self._indexes.pop(attrs["scope"], None)

    def _op_touch(self, entity_id: str, at: str) -> None:
        node = self.graph.nodes[entity_id]
        node["mentions"] += 1
        node["updated_at"] = parse_time(at)

    def _op_attributes(self, entity_id: str, values: Attrs) -> None:
        node = self.graph.nodes[entity_id]
        node["attributes"] = {**node.get("attributes", {}), **values}

    def _op_relation(self, data: Attrs) -> None:
        attrs = self._decode(data)
        attrs["provenance"] = list(attrs["provenance"])
        if attrs.get("fact_embedding") is not None:
            attrs["fact_embedding"] = as_vector(attrs["fact_embedding"])
        self.graph.add_edge(attrs["source_id"], attrs["destination_id"], key=attrs["id"], **attrs)
        self._ends[attrs["id"]] = (attrs["source_id"], attrs["destination_id"])
        self.facts.invalidate(attrs["scope"])

    def _op_relation_fact(self, relation_id: str, fact: str, embedding: object) -> None:
        d = self.edge(relation_id)
        if d is not None:
            d["fact"], d["fact_embedding"] = fact, as_vector(embedding)
            self.facts.invalidate(d["scope"])

    def _op_relation_remove(self, relation_id: str) -> None:
        ends = self._ends.pop(relation_id, None)
        if ends is not None:
            self.facts.invalidate(self.graph.edges[ends[0], ends[1], relation_id]["scope"])
            self.graph.remove_edge(ends[0], ends[1], key=relation_id)

    def _op_mention(self, relation_id: str, add_id: str, at: str) -> None:
        d = self.edge(relation_id)
        assert d is not None
        d["mentions"] += 1
        d["updated_at"] = parse_time(at)
        if add_id not in d["provenance"]:
            d["provenance"].append(add_id)

    def _op_retire(self, relation_id: str, invalid_at: str, expired_at: str, add_id: str | None = None) -> None:
        d = self.edge(relation_id)
        assert d is not None
        d["invalid_at"], d["expired_at"] = parse_time(invalid_at), parse_time(expired_at)
        d["updated_at"] = d["expired_at"]
        d["retired_by"] = add_id
        self.facts.invalidate(d["scope"])  # its times are in the scope's fact index

    def _op_memory(self, data: Attrs) -> None:
        self.memories.create(self._decode(data))

    def _op_memory_update(self, memory_id: str, changes: Attrs) -> None:
        times = {k: parse_time(changes[k]) for k in ("updated_at", "valid_at") if changes.get(k)}
        self.memories.update(memory_id, {**changes, **times})

    def _op_memory_soft_delete(self, memory_id: str, at: str, invalid_at: str | None = None) -> None:
        self.memories.soft_delete(memory_id, parse_time(at), parse_time(invalid_at or at))

    def _op_memory_remove(self, memory_id: str) -> None:
        self.memories.remove(memory_id)

    def _op_messages(self, key: str, messages: list[Attrs], keep: int) -> None:
        self.conversations.append(key, messages, keep)

    def _op_import_key(self, key: str, scope_key: str, outcome: str | None = None) -> None:
        self.import_keys[key] = scope_key
        if outcome is not None:
            self.key_outcomes[key] = outcome

    def _op_summary(self, key: str, text: str, through: int, at: str) -> None:
        self.conversations.set_summary(key, text, through, at)

    def _op_delete_scope(self, key: str) -> None:
        self.memories.drop_scope(key)
        self.conversations.drop(key)
        self.import_keys = {k: s for k, s in self.import_keys.items() if s != key}
        self.key_outcomes = {k: o for k, o in self.key_outcomes.items() if k in self.import_keys}
        nodes = self.by_scope.pop(key, {})
        for _, _, rid in chain(self.graph.out_edges(nodes, keys=True), self.graph.in_edges(nodes, keys=True)):
            self._ends.pop(rid, None)
        for node in nodes:
            self.by_canonical.pop((key, self.graph.nodes[node]["canonical"]), None)
        self.graph.remove_nodes_from(nodes)
        self._indexes.pop(key, None)
        self.facts.invalidate(key)

    def _op_purge(self, memory_ids: list[str], seqs: dict[str, list[int]]) -> None:
        """Retention (planned in lifecycle.py): expired memories and messages go."""
        for memory_id in memory_ids:
            if memory_id in self.memories.rows:
                self.memories.remove(memory_id)
        self.conversations.drop_messages(seqs)

    def _op_forget(self, entity_ids: list[str], memory_ids: list[str], seqs: dict[str, list[int]], summaries: list[str]) -> None:
        """Erasure (planned in lifecycle.py): memories, messages, summaries and entities go."""
        self._op_purge(memory_ids, seqs)
        self.conversations.drop_summaries(summaries)
        for entity_id in entity_ids:
            self.remove_entity(entity_id)

    def remove_entity(self, entity_id: str) -> None:
        """The entity with its relations (erasure)."""
        if entity_id not in self.graph:
            return
        node = self.graph.nodes[entity_id]
        for _, _, rid in chain(self.graph.out_edges([entity_id], keys=True), self.graph.in_edges([entity_id], keys=True)):
            self._ends.pop(rid, None)
        self.by_canonical.pop((node["scope"], node["canonical"]), None)
        self.by_scope.get(node["scope"], {}).pop(entity_id, None)
        self._indexes.pop(node["scope"], None)
        self.facts.invalidate(node["scope"])
        for row in self.memories.rows.values():  # MENTIONS links of remaining memories
            if entity_id in row["mentions"]:
                row["mentions"].remove(entity_id)
        self.graph.remove_node(entity_id)

    def _op_reset(self) -> None:
        self.clear()

    def _decode(self, data: Attrs) -> Attrs:
        self._seq += 1
        return {**{k: (parse_time(v) if k in TIME_FIELDS else v) for k, v in data.items()}, "_seq": self._seq}

    # --- snapshots --------------------------------------------------------------------------

    def snapshot(self) -> dict[str, list[Attrs]]:
        """Everything, JSON-ready, oldest first (so loading it keeps the order)."""
        nodes = oldest_first(n for _, n in self.graph.nodes(data=True))
        edges = oldest_first(d for _, _, d in self.graph.edges(data=True))
        memories = oldest_first(self.memories.rows.values())
        return {
            "entities": [_encode(n) for n in nodes],
            "relations": [_encode(d) for d in edges],
            "memories": [_encode(m) for m in memories],
            "conversations": self.conversations.snapshot(),  # type: ignore[dict-item]  # a JSON object beside the record lists
            "import_keys": [{"key": k, "scope": s, "outcome": self.key_outcomes.get(k)} for k, s in self.import_keys.items()],
        }

    def load_snapshot(self, snapshot: dict[str, list[Attrs]]) -> None:
        self.apply(["entity", e] for e in snapshot["entities"])
        self.apply(["relation", r] for r in snapshot["relations"])
        self.apply(["memory", m] for m in snapshot.get("memories", []))  # absent in snapshots before memories
        self.conversations.load(snapshot.get("conversations", {}))  # type: ignore[arg-type]  # written by snapshot() above
        self.import_keys = {row["key"]: row["scope"] for row in snapshot.get("import_keys", [])}
        self.key_outcomes = {row["key"]: row["outcome"] for row in snapshot.get("import_keys", []) if row.get("outcome") is not None}

    # --- reads --------------------------------------------------------------------------------

    def in_scope(self, entity_id: str, key: str) -> bool:
        return entity_id in self.by_scope.get(key, {})

    def edge(self, relation_id: str) -> Attrs | None:
        ends = self._ends.get(relation_id)
        return None if ends is None else self.graph.edges[ends[0], ends[1], relation_id]

    def current_instance(self, source_id: str, rel_type: str, destination_id: str, skip: set[str], ids: str) -> str | None:
        """The id of the current relation (source, type, destination) written with exactly the scope
        ids ``ids`` (Scope.full_key), ignoring ids in ``skip``."""
        for rid, d in (self.graph.get_edge_data(source_id, destination_id) or {}).items():
            if d["type"] == rel_type and is_current(d) and rid not in skip and d.get("ids", d["scope"]) == ids:
                return str(rid)
        return None

    def scope_entities(self, key: str) -> list[Attrs]:
        return oldest_first(self.graph.nodes[i] for i in self.by_scope.get(key, {}))

    def scope_relations(self, key: str) -> list[Attrs]:
        """Every relation of the scope (both endpoints are always in the relation's scope)."""
        return oldest_first(d for _, _, d in self.graph.out_edges(self.by_scope.get(key, {}), data=True))

    def edges_touching(self, entity_ids: Iterable[str]) -> list[Attrs]:
        ids = list(entity_ids)
        edges = chain(self.graph.out_edges(ids, keys=True, data=True), self.graph.in_edges(ids, keys=True, data=True))
        return oldest_first({rid: d for _, _, rid, d in edges}.values())

    def incident(self, entity_id: str) -> list[Attrs]:
        """The relations touching one entity, in no particular order (edges_touching, unsorted)."""
        edges = chain(self.graph.out_edges(entity_id, keys=True, data=True), self.graph.in_edges(entity_id, keys=True, data=True))
        return list({rid: d for _, _, rid, d in edges}.values())

    def scope_index(self, key: str) -> ScopeIndex:
        index = self._indexes.get(key)
        if index is None:
            nodes = [self.graph.nodes[i] for i in self.by_scope.get(key, {})]
            rows = np.array([n["embedding"] for n in nodes], dtype=np.float64).reshape(len(nodes), self.embedding_dims)
            tokens = [frozenset(WORD.findall(n["canonical"].casefold())) for n in nodes]
            index = self._indexes[key] = ScopeIndex([n["id"] for n in nodes], normalise(rows), tokens)
        return index

    def entity(self, entity_id: str, score: float | None = None) -> Entity:
        n = self.graph.nodes[entity_id]
        return Entity(
            id=n["id"], name=n["name"], canonical=n["canonical"], entity_type=n["entity_type"],
            mentions=n["mentions"], created_at=n["created_at"], updated_at=n["updated_at"], score=score,
            attributes=dict(n.get("attributes", {})),
        )  # fmt: skip

    def relation_matches(self, d: Attrs, flt: Filter | None) -> bool:
        """The relation filter (graphmem.schema.filters) on an edge's fields and its endpoints'."""
        if flt is None or not flt.applies("relation"):
            return True
        s, t = self.graph.nodes[d["source_id"]], self.graph.nodes[d["destination_id"]]
        record = {
            "user_id": d.get("user_id"), "agent_id": d.get("agent_id"), "run_id": d.get("run_id"),
            "created_at": d["created_at"], "updated_at": d.get("updated_at"), "valid_at": d["valid_at"],
            "invalid_at": d["invalid_at"], "relationship": d["type"], "source_entity": s["name"], "destination_entity": t["name"],
            "source_type": s["entity_type"], "destination_type": t["entity_type"],
        }  # fmt: skip
        return filters.matches(flt, "relation", record)

    def relation(self, d: Attrs, scores: dict[str, float] | None = None) -> Relation:
        nodes = self.graph.nodes
        source, destination = nodes[d["source_id"]], nodes[d["destination_id"]]
        return Relation(
            id=d["id"], source_id=d["source_id"], source=nodes[d["source_id"]]["name"], relationship=d["type"],
            destination_id=d["destination_id"], destination=nodes[d["destination_id"]]["name"],
            valid_at=d["valid_at"], invalid_at=d["invalid_at"], created_at=d["created_at"],
            expired_at=d["expired_at"], mentions=d["mentions"], provenance=list(d["provenance"]),
            scores=dict(scores or {}), source_type=source["entity_type"], destination_type=destination["entity_type"],
            source_attributes=dict(source.get("attributes", {})), destination_attributes=dict(destination.get("attributes", {})),
            fact=d.get("fact"), retired_by=d.get("retired_by"),
        )  # fmt: skip


def _encode(attrs: Attrs) -> Attrs:
    """JSON-ready attributes (the journal packs the embedding array): datetimes as ISO strings,
    internal keys dropped."""
    return {k: (iso(v) if k in TIME_FIELDS else v) for k, v in attrs.items() if not k.startswith("_")}


def oldest_first(items: Iterable[Attrs]) -> list[Attrs]:
    return sorted(items, key=lambda a: (a["created_at"], a["_seq"]))


def is_current(d: Attrs) -> bool:
    return d["invalid_at"] is None and d["expired_at"] is None


def normalise(rows: np.ndarray) -> np.ndarray:
    """L2-normalise rows defensively; a zero row stays zero (similar to nothing)."""
    rows = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(rows, axis=1, keepdims=True)
    unit: np.ndarray = np.divide(rows, norms, out=np.zeros_like(rows), where=norms > 0)
    return unit
