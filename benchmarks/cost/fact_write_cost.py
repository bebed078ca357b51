"""What relation facts add to an add's one write: ``store.write`` of adds like the add_cost script's
(3 new entities and 3 new relations to the user's own node, one memory), alternately with and
without relation facts (text + 384-d embedding), ``--adds`` of each on one scope; median and p95 ms
per write, and the statements per write (``round_trips``), both stores.

    python -m benchmarks.cost.fact_write_cost --stores embedded neo4j --adds 100
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from pathlib import Path

from benchmarks import common
from benchmarks.retrieval.relation_fact_search import _open
from graphmem.embeddings import HashingEmbedder
from graphmem.schema.facts import relation_fact
from graphmem.stores.base import GraphStore
from graphmem.types import EntityWrite, GraphWrite, MemoryWrite, RelationWrite, Scope, new_id, utcnow

KINDS = ("LIKES", "VISITED", "OWNS")


def one_add(scope: Scope, me: EntityWrite, i: int, facts: bool, embedder: HashingEmbedder) -> GraphWrite:
    names = [f"thing {i}-{k}" for k in range(3)]
    ents = [EntityWrite(new_id(), n, n, "thing", v, True) for n, v in zip(names, embedder.embed(names), strict=True)]
    rels = []
    for kind, e in zip(KINDS, ents, strict=True):
        r = RelationWrite(me.id, kind, e.id, utcnow())
        if facts:
            r.fact = relation_fact(me.name, "person", kind, e.name, "thing", self_name=me.name)
            r.fact_embedding = embedder.embed([r.fact])[0]
        rels.append(r)
    text = f"likes thing {i}"
    memory = MemoryWrite("ADD", new_id(), text, embedder.embed([text])[0], {}, "user", [e.id for e in ents])
    return GraphWrite(new_id(), scope, utcnow(), [me, *ents], rels, memories=[memory])


def measure(store: GraphStore, adds: int, embedder: HashingEmbedder) -> list[list[object]]:
    scope = Scope.of(user_id=f"bench-{uuid.uuid4().hex[:8]}")
    me = EntityWrite(new_id(), scope.self_name, scope.self_name, "person", embedder.embed([scope.self_name])[0], True)
    store.write(GraphWrite(new_id(), scope, utcnow(), [me]))
    me.is_new = False
    times: dict[bool, list[float]] = {True: [], False: []}
    trips: dict[bool, int] = {True: 0, False: 0}
    try:
        for i in range(adds):
            for facts in (True, False):  # alternating: load falls on both alike
                write = one_add(scope, me, 2 * i + facts, facts, embedder)
                before = store.round_trips
                started = time.perf_counter()
                store.write(write)
                times[facts].append((time.perf_counter() - started) * 1000)
                trips[facts] += store.round_trips - before
    finally:
        store.delete_all(scope)
    rows = []
    for facts in (False, True):
        pct = common.percentiles(times[facts], (50, 95))
        rows.append(["with facts" if facts else "without", pct["p50"], pct["p95"], round(trips[facts] / adds, 2)])
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.cost.fact_write_cost", description=__doc__.split("\n\n")[0])
    p.add_argument("--stores", nargs="+", default=["embedded", "neo4j"], choices=["embedded", "neo4j"])
    p.add_argument("--adds", type=int, default=100)
    p.add_argument("--neo4j-url", default="bolt://127.0.0.1:7687")
    args = p.parse_args(argv)
    embedder = HashingEmbedder(dims=384)
    for kind in args.stores:
        with tempfile.TemporaryDirectory() as tmp:
            store = _open(kind, Path(tmp), args.neo4j_url)
            try:
                store.setup()
                measure(store, 10, embedder)  # warm: plans compiled
                rows = measure(store, args.adds, embedder)
            finally:
                store.close()
        print(f"\n{kind} store: store.write of an add with 3 new entities, 3 relations and 1 memory, {args.adds} each, alternating")
        print(common.table(["relations", "write ms p50", "write ms p95", "statements/write"], rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
