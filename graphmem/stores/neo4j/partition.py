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
from graphmem.resources import load_cypher
from graphmem.stores.neo4j.values import Statement
from graphmem.types import Scope

_SAFE = re.compile(r"^[A-Za-z][A-Za-z0-9_]{1,80}$")


def names(scope: Scope) -> tuple[str, str]:
    """(label, index name) of the scope's partition."""
    digest = hashlib.sha256(scope.key.encode("utf-8")).hexdigest()[:24]
    label, index = f"Scope_{digest}", f"entity_embedding_{digest}"
    for name in (label, index):
        if not _SAFE.match(name):  # cannot happen for a hex digest; checked because it becomes Cypher text
            raise StoreError(f"unsafe partition name {name!r}")
    return label, index


def create_index(scope: Scope, dimensions: int) -> Statement:
    label, index = names(scope)
    text = load_cypher("partition_index").replace("__INDEX__", index).replace("__LABEL__", label)
    return Statement("partition_index", {"dimensions": dimensions}, text_override=text)


def label_scope(scope: Scope, record: bool) -> Statement:
    label, index = names(scope)
    return Statement("partition_label", {"scope": scope.key, "label": label, "index": index if record else None})


def await_index(scope: Scope, timeout_seconds: int) -> Statement:
    return Statement("await_index", {"index": names(scope)[1], "timeout_seconds": timeout_seconds})
