"""What the fact candidates cost a relation search: ``store.search_graph`` on a user hub of N
relations (each with a fact and a fact embedding), with the fact scan on (``fact_top_k`` 10) and off
(0, the seeds alone, as before facts), in one run, both stores.

The graph: the user's own node with N relations of many kinds to N entities, written in adds of 50
(the hashing embedder: the cost of a search does not depend on what the vectors mean). Queries: a
first-person question (the own node seeded by name: every relation of the hub is a candidate, the
issue's worst case) and a question seeding nothing by name. Store time only (the query is embedded
once, before timing); each configuration alternates with the other, ``--repeats`` times each.

    python -m benchmarks.retrieval.relation_fact_search --stores embedded neo4j --relations 1000
"""

from __future__ import annotations

import argparse
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

from benchmarks import common
from graphmem.embeddings import HashingEmbedder
from graphmem.schema.facts import relation_fact
from graphmem.stores.base import GraphQuery, GraphStore
from graphmem.types import EntityWrite, GraphWrite, RelationWrite, Scope, new_id, utcnow

KINDS = ("HAS_PET", "LIVES_IN", "WORKS_AT", "LIKES", "KNOWS", "VISITED", "OWNS", "STUDIED_AT", "PLAYS", "READ")
QUERIES = {"first-person": ("do I have a dog?", True), "no seed": ("which pets are there", False)}


def build(store: GraphStore, scope: Scope, n: int, embedder: HashingEmbedder) -> None:
    me = EntityWrite(new_id(), scope.self_name, scope.self_name, "person", embedder.embed([scope.self_name])[0], True)
    store.write(GraphWrite(new_id(), scope, utcnow(), [me]))
    me.is_new = False
    for start in range(0, n, 50):
        names = [f"thing {i}" for i in range(start, min(n, start + 50))]
        ents = [EntityWrite(new_id(), x, x, "thing", v, True) for x, v in zip(names, embedder.embed(names), strict=True)]
        facts = [relation_fact(scope.self_name, "person", KINDS[i % len(KINDS)], e.name, "thing", self_name=scope.self_name)
                 for i, e in enumerate(ents, start)]
        rels = [RelationWrite(me.id, KINDS[i % len(KINDS)], e.id, utcnow(), fact=f, fact_embedding=v)
                for i, (e, f, v) in enumerate(zip(ents, facts, embedder.embed(facts), strict=True), start)]
        store.write(GraphWrite(new_id(), scope, utcnow(), [me, *ents], rels))


def measure(store: GraphStore, scope: Scope, embedder: HashingEmbedder, repeats: int) -> list[list[Any]]:
    rows = []
    for label, (text, first_person) in QUERIES.items():
        (vec,) = embedder.embed([text])
        times: dict[int, list[float]] = {10: [], 0: []}
        found: dict[int, int] = {}
        for _ in range(repeats):
            for k in (10, 0):  # alternating, so load on the machine falls on both alike
                q = GraphQuery(vec, text, [scope.self_name] if first_person else [], fact_top_k=k)
                started = time.perf_counter()
                found[k] = len(store.search_graph(scope, q))
                times[k].append((time.perf_counter() - started) * 1000)
        on, off = common.percentiles(times[10], (50, 95)), common.percentiles(times[0], (50, 95))
        rows.append([label, found[10], found[0], on["p50"], on["p95"], off["p50"], off["p95"],
                     round((on["p95"] or 0) / max(off["p95"] or 1e-9, 1e-9), 2)])
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.retrieval.relation_fact_search", description=__doc__.split("\n\n")[0])
    p.add_argument("--stores", nargs="+", default=["embedded", "neo4j"], choices=["embedded", "neo4j"])
    p.add_argument("--relations", type=int, default=1000)
    p.add_argument("--repeats", type=int, default=50)
    p.add_argument("--neo4j-url", default="bolt://127.0.0.1:7687")
    args = p.parse_args(argv)
    embedder = HashingEmbedder(dims=384)
    for kind in args.stores:
        with tempfile.TemporaryDirectory() as tmp:
            store = _open(kind, Path(tmp), args.neo4j_url)
            scope = Scope.of(user_id=f"bench-{uuid.uuid4().hex[:8]}")
            try:
                store.setup()
                build(store, scope, args.relations, embedder)
                rows = measure(store, scope, embedder, args.repeats)
            finally:
                store.delete_all(scope)
                store.close()
        print(f"\n{kind} store, {args.relations} relations around the user, store time per search_graph (ms), {args.repeats} each")
        print(common.table(["query", "found (facts on)", "found (off)", "on p50", "on p95", "off p50", "off p95", "p95 on/off"], rows))
    return 0


def _open(kind: str, folder: Path, url: str) -> GraphStore:
    if kind == "embedded":
        from graphmem.stores.embedded import EmbeddedStore

        return EmbeddedStore(folder / "graph", embedding_dims=384)
    from graphmem.stores.neo4j import Neo4jStore

    return Neo4jStore(url=url, embedding_dims=384)


if __name__ == "__main__":
    raise SystemExit(main())
