"""The embedded store's retention and erasure (stores/lifecycle.py describes them).

Planning reads the graph and returns journal operations plus the report; applying them goes
through MemoryGraph.apply like every change (its _op_purge and _op_forget):

    ["purge", [memory ids], {scope key: [message seqs]}]
    ["forget", [entity ids], [memory ids], {scope key: [message seqs]}, [scope keys whose summary goes]]
    ["delete_scope", scope key]     (forget_scope: one per scope written with the given ids)

After an erasure the store rewrites its snapshot and empties its journal (store.py), so the
erased text is gone from the files too.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import TYPE_CHECKING

from graphmem.stores.lifecycle import Erased, is_expired, matches
from graphmem.types import Scope, parse_time

if TYPE_CHECKING:
    from graphmem.stores.embedded.graph import Attrs, MemoryGraph, Op


def plan_purge(g: MemoryGraph, now: datetime, batch: int) -> tuple[list[Op], Erased]:
    memory_ids = [i for i, row in g.memories.rows.items() if is_expired(row.get("expires_at"), now)][:batch]
    seqs: dict[str, list[int]] = {}
    count = 0
    for key, log in g.conversations.logs.items():
        for m in log.messages:
            if count < batch and is_expired(parse_time(m.get("expires_at")), now):
                seqs.setdefault(key, []).append(m["seq"])
                count += 1
    ops: list[Op] = [["purge", memory_ids, seqs]] if memory_ids or seqs else []
    return ops, Erased(memory_ids=memory_ids, messages=count)


def scope_keys(g: MemoryGraph, scope: Scope) -> list[str]:
    """Every stored scope key written with the scope's ids (None in the scope matches any value)."""
    keys = set(g.by_scope) | set(g.memories.by_scope) | set(g.conversations.logs)
    wanted = [scope.user_id, scope.agent_id, scope.run_id]
    return sorted(k for k in keys if all(w is None or w == v for w, v in zip(wanted, json.loads(k), strict=True)))


def plan_forget_scope(g: MemoryGraph, scope: Scope) -> tuple[list[Op], Erased]:
    erased = Erased()
    ops: list[Op] = []
    for key in scope_keys(g, scope):
        erased.entities += len(g.by_scope.get(key, {}))
        erased.memory_ids += list(g.memories.by_scope.get(key, {}))
        log = g.conversations.logs.get(key)
        if log is not None:
            erased.messages += len(log.messages)
            erased.summaries += 1
        ops.append(["delete_scope", key])
    return ops, erased


def plan_forget_entity(g: MemoryGraph, scope: Scope, canonical: str, pattern: str) -> tuple[list[Op], Erased]:
    keys = scope_keys(g, scope)
    entity_ids = [g.by_canonical[(k, canonical)] for k in keys if (k, canonical) in g.by_canonical]
    memory_ids = [
        i for k in keys for i in g.memories.by_scope.get(k, {})
        if matches(pattern, g.memories.rows[i]["text"]) or set(entity_ids) & set(g.memories.rows[i]["mentions"])
    ]  # fmt: skip
    seqs: dict[str, list[int]] = {}
    summaries: list[str] = []
    for key in keys:
        log = g.conversations.logs.get(key)
        if log is None:
            continue
        gone = [m["seq"] for m in log.messages if matches(pattern, m["content"])]
        if gone:
            seqs[key] = gone
        if matches(pattern, log.summary):
            summaries.append(key)
    erased = Erased(memory_ids, len(entity_ids), sum(len(s) for s in seqs.values()), len(summaries))
    ops: list[Op] = [["forget", entity_ids, memory_ids, seqs, summaries]] if entity_ids or memory_ids or seqs or summaries else []
    # relation versions whose fact names the entity without touching it: erased like matching memories
    ops += [["relation_remove", d["id"]] for k in keys for d in g.scope_relations(k)
            if d["source_id"] not in entity_ids and d["destination_id"] not in entity_ids
            and _written_in(d, scope) and matches(pattern, d.get("fact"))]
    return ops, erased


def _written_in(d: Attrs, scope: Scope) -> bool:
    """The relation was written with every id the scope names."""
    return all(v is None or d.get(k) == v for k, v in scope.properties().items())


__all__ = ["plan_forget_entity", "plan_forget_scope", "plan_purge", "re"]
