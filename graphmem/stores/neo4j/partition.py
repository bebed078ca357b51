"""Scope partitions: a vector index of its own for a scope past VectorPlan.partition_size.

Why: the global vector index cannot pre-filter by scope, so a large scope is searched with k
oversampled by total / scope size (k ≈ 1000 for 10k entities among 1M: ~100 ms on 2 cores); its own
index answers with k = top_k in a few milliseconds. The index name and label are derived from a
SHA-256 of the scope key and checked against a strict pattern before they are written into the DDL
(the only Cypher text graphmem ever builds; index names and labels cannot be parameters).
"""

from __future__ import annotations

import hashlib
import re

from graphmem.errors import StoreError
from graphmem.schema.resources import load_cypher
from graphmem.stores.neo4j.values import Statement
from graphmem.types import Scope

_SAFE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{1,80}$")


def names(scope: Scope) -> dict[str, str]:
    """Labels and index names of the scope's partition (entities and memories)."""
    digest = hashlib.sha256(scope.key.encode("utf-8")).hexdigest()[:24]
    out = {
        "label": f"Scope_{digest}",
        "index": f"entity_embedding_{digest}",
        "memory_label": f"ScopeMemory_{digest}",
        "memory_index": f"memory_embedding_{digest}",
    }
    for name in out.values():
        if not _SAFE.match(name):  # cannot happen for a hex digest; checked because it becomes Cypher text
            raise StoreError(f"unsafe partition name {name!r}")
    return out


def create_indexes(scope: Scope, dimensions: int) -> list[Statement]:
    n = names(scope)
    template = load_cypher("partition_index")
    return [
        Statement("partition_index", {"dimensions": dimensions}, text_override=template.replace("__INDEX__", index).replace("__LABEL__", label))
        for label, index in ((n["label"], n["index"]), (n["memory_label"], n["memory_index"]))
    ]


def label_scope(scope: Scope, record: bool) -> Statement:
    n = names(scope)
    params: dict[str, str | None] = {"scope": scope.key, "label": n["label"], "memory_label": n["memory_label"]}
    params.update(index=n["index"] if record else None, memory_index=n["memory_index"] if record else None)
    return Statement("partition_label", params)


def await_indexes(scope: Scope, timeout_seconds: int) -> list[Statement]:
    n = names(scope)
    return [Statement("await_index", {"index": n[k], "timeout_seconds": timeout_seconds}) for k in ("index", "memory_index")]
