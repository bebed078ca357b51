"""Warm a freshly started server for the short-lived processes that come after it.

A long-lived process plans graphmem's statements beside its set-up (warm.py) and never waits for it;
a short-lived one (a CLI command, a cron job, a serverless function) would plan them on its own path,
seconds on a fresh JVM, once per server start. The plan cache is the server's, so one warming right
after the start serves every process after it. ``python -m graphmem.launcher start`` runs
this module (``main``, a process of its own) when it started the server and the database already holds graphmem's schema (a
restart of a database in use); the dimension of the embeddings is read from graphmem's own vector
index, so the statements are the ones the configured store will run. A database without the schema
has nothing to warm: the first store's set-up creates it.
"""

from __future__ import annotations

import sys
import time

from graphmem.errors import GraphMemError
from graphmem.stores.neo4j import queries

#: seconds warm_server waits for the plans (a fresh server on 2 busy cores takes tens of seconds)
WARM_TIMEOUT = 300.0


def schema_dims(rows: list[dict[str, object]]) -> int | None:
    """The dimension of graphmem's memory vector index among SHOW INDEXES rows (None: no such index)."""
    for row in rows:
        if row.get("name") == queries.VECTOR_INDEXES[1] and row.get("type") == "VECTOR":
            dims = row.get("dimensions")
            return int(dims) if isinstance(dims, (int, float, str)) and str(dims).isdigit() else None
    return None


def database_dims(url: str, username: str | None = None, password: str | None = None, database: str | None = None) -> int | None:
    """The embedding dimension the database's graphmem schema was made for (None: no schema yet), in
    one read; an unreachable server is reported at once, not after the driver's retries."""
    from graphmem.stores.neo4j.store import Neo4jStore

    probe = Neo4jStore(url, username, password, database=database, warm_plans=False)
    try:
        probe.reach()
        return schema_dims([dict(r) for r in probe._query(queries.show_indexes(), read=True)])
    finally:
        probe.close()


def warm_server(url: str, database: str | None = None, timeout: float = WARM_TIMEOUT) -> str:
    """Plan graphmem's add and search statements on the server at ``url`` (and rehearse one add and
    one search in a scope of their own, deleted after); returns what was done, in one line."""
    from graphmem.stores.neo4j.store import Neo4jStore

    started = time.monotonic()
    dims = database_dims(url, database=database)
    if dims is None:
        return "nothing to warm: the database holds no graphmem schema yet (the first store's set-up creates it)"
    store = Neo4jStore(url, database=database, embedding_dims=dims, warm_plans=True)
    try:
        store.setup()
        store.warm()
        done = store.wait_warm(timeout)
    finally:
        store.close()
    took = time.monotonic() - started
    if not done:
        return f"warming graphmem's statements did not finish in {timeout:.0f} s; the first command plans the rest"
    return f"planned graphmem's add and search statements ({dims}-dimensional embeddings) in {took:.1f} s"


def warm_quietly(url: str) -> str:
    """``warm_server`` for the launcher: a failure is reported, never raised (the server is up)."""
    try:
        return warm_server(url)
    except GraphMemError as exc:
        return f"could not warm graphmem's statements: {exc}"


def main(argv: list[str] | None = None) -> int:
    """``python -m graphmem.stores.neo4j.prewarm BOLT_URL``: what the launcher's start runs."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m graphmem.stores.neo4j.prewarm BOLT_URL", file=sys.stderr)
        return 2
    said = warm_quietly(args[0])
    print(said)
    return 1 if said.startswith("could not") else 0


if __name__ == "__main__":
    raise SystemExit(main())
