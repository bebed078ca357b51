"""``graphmem reindex``: give every relation version its fact text and fact embedding (graphmem.schema.facts).

    graphmem reindex                 # versions without a fact (a store written before facts)
    graphmem reindex --all           # every version again (after a change of embedder)
    graphmem reindex --user alice    # one scope only

Walks the store's scopes (``GraphStore.scopes``), reads each scope's relation versions, current and
retired (``get_all``), writes the fact of each version that has none (or of all with ``--all``) from
the names and entity types stored now and the times it states (``stored_times``), embeds the facts
``batch`` at a time (one embedding request per batch) and stores them (``set_relation_facts``, one
round trip per batch). A fact an add wrote is kept as it is, unless ``--all``. Safe to run again and
to interrupt: what was stored stays, the next run does the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphmem.schema.facts import fact_meaning, relation_fact, stored_times
from graphmem.stores.base import GraphStore, RelationFact
from graphmem.types import Relation, Scope

if TYPE_CHECKING:
    from graphmem.embeddings.base import Embedder

BATCH = 256


@dataclass
class ReindexReport:
    scopes: int = 0
    relations: int = 0  # versions read
    facts: int = 0  # versions given a fact and an embedding
    embedding_requests: int = 0

    def to_dict(self) -> dict[str, int]:
        return {"scopes": self.scopes, "relations": self.relations, "facts": self.facts, "embedding_requests": self.embedding_requests}


def fact_of(rel: Relation, self_name: str) -> str:
    """A stored version's fact, written afresh by the one wording rule."""
    valid_at, invalid_at = stored_times(rel.valid_at, rel.invalid_at, rel.created_at, rel.expired_at)
    return relation_fact(rel.source, rel.source_type, rel.relationship, rel.destination, rel.destination_type,
                         valid_at=valid_at, invalid_at=invalid_at, self_name=self_name)


def meaning_of(rel: Relation, self_name: str, name_left_out: bool | None = None) -> str:
    """The text a stored version's fact embedding is made from (``fact_meaning``), with the times
    ``fact_of`` states."""
    valid_at, invalid_at = stored_times(rel.valid_at, rel.invalid_at, rel.created_at, rel.expired_at)
    return fact_meaning(rel.source, rel.source_type, rel.relationship, rel.destination, rel.destination_type,
                        valid_at=valid_at, invalid_at=invalid_at, self_name=self_name, name_left_out=name_left_out)


def reindex(
    store: GraphStore, embedder: Embedder, scopes: list[Scope] | None = None, everything: bool = False, batch: int = BATCH,
    progress: Callable[[ReindexReport], None] | None = None,
) -> ReindexReport:
    """Fill (or with ``everything`` rewrite) the facts of every relation version of ``scopes`` (default:
    every scope of the store)."""
    report = ReindexReport()
    for scope in scopes if scopes is not None else store.scopes():
        report.scopes += 1
        versions = store.get_all(scope, include_invalidated=True)
        report.relations += len(versions)
        todo = [r for r in versions if everything or r.fact is None]
        for start in range(0, len(todo), max(1, batch)):
            chunk = todo[start : start + max(1, batch)]
            texts = [fact_of(r, scope.self_name) if everything or r.fact is None else r.fact for r in chunk]
            vectors = embedder.embed([meaning_of(r, scope.self_name) for r in chunk])
            report.embedding_requests += 1
            facts = [RelationFact(r.id, r.source_id, t, v) for r, t, v in zip(chunk, texts, vectors, strict=True)]
            report.facts += store.set_relation_facts(scope, facts)
            if progress is not None:
                progress(report)
    return report


def run(ns: Any, config: dict[str, Any] | None) -> int:
    """``graphmem reindex``: a summary line on stdout."""
    import json

    from graphmem.memory import Memory

    with Memory(config) as memory:
        named = (ns.only_user, ns.only_agent, ns.only_run)
        scopes = [Scope.of(*named)] if any(named) else None
        report = reindex(memory.store, memory.embedder, scopes, everything=ns.all, batch=ns.batch_size)
    out = report.to_dict()
    print(json.dumps(out) if ns.json else ", ".join(f"{k}: {v}" for k, v in out.items()))
    return 0


def add_parser(sub: Any) -> None:
    from pathlib import Path

    p = sub.add_parser("reindex", help="give relations their fact text and embedding",
                       description="Write the fact (the triple in words, with entity types and time) and its embedding for "
                       "every relation version that has none, current or retired (a store written before facts); "
                       "--all rewrites every one (after a change of embedder).")
    p.add_argument("--all", action="store_true", help="rewrite every fact and embedding, not only the missing ones")
    p.add_argument("--batch-size", type=int, default=BATCH, help=f"facts per embedding request and write (default {BATCH})")
    g = p.add_argument_group("one scope only (default: every scope)")
    # not user_id / agent_id / run_id: the CLI requires a scope of every command that has those
    g.add_argument("--user", dest="only_user", help="user id")
    g.add_argument("--agent", dest="only_agent", help="agent id")
    g.add_argument("--run", dest="only_run", help="run id")
    p.add_argument("--config", type=Path, help="JSON config file (default: $GRAPHMEM_CONFIG, ./graphmem.json, $GRAPHMEM_HOME/config.json)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
