"""The launcher warms a restarted database for the short-lived processes after it
(graphmem/stores/neo4j/prewarm.py): the real Neo4j, its real indexes."""

from __future__ import annotations

import pytest

from graphmem.launcher import build_parser, warm_statements
from graphmem.stores.neo4j import queries
from graphmem.stores.neo4j.prewarm import schema_dims, warm_quietly, warm_server
from graphmem.stores.neo4j.store import Neo4jStore


def test_schema_dims_reads_graphmem_memory_index_only():
    rows = [{"name": "entity_embedding", "type": "VECTOR", "dimensions": 384},
            {"name": "memory_embedding", "type": "VECTOR", "dimensions": 256},
            {"name": "other", "type": "VECTOR", "dimensions": 1536}]
    assert schema_dims(rows) == 256
    assert schema_dims([r for r in rows if r["name"] != "memory_embedding"]) is None
    assert schema_dims([{"name": "memory_embedding", "type": "RANGE", "dimensions": None}]) is None


@pytest.mark.neo4j
def test_warm_server_plans_with_the_database_own_dimension_and_leaves_nothing(neo4j_uri):
    store = Neo4jStore(neo4j_uri, warm_plans=False)
    try:
        rows = [dict(r) for r in store._query(queries.show_indexes(), read=True)]
        dims = schema_dims(rows)
        if dims is None:  # a database nobody set up yet: set it up as a store would
            store.setup()
            dims = store.embedding_dims
        said = warm_server(neo4j_uri)
        assert said.startswith("planned graphmem's add and search statements") and f"({dims}-dimensional" in said
        left = store._driver.execute_query("MATCH (n) WHERE n.user_id STARTS WITH 'graphmem-warming-' RETURN count(n) AS n").records
        assert left[0]["n"] == 0  # the rehearsal's scope is gone
    finally:
        store.close()


def test_warming_an_unreachable_server_is_reported_not_raised():
    said = warm_quietly("bolt://127.0.0.1:1")
    # one connection attempt (Neo4jStore.reach), not the driver's transaction retries: it says why
    assert said.startswith("could not warm graphmem's statements: Neo4j is unreachable at bolt://127.0.0.1:1")
    assert warm_statements("bolt://127.0.0.1:1").startswith("could not warm graphmem's statements:")  # the launcher's process


def test_launcher_start_warms_unless_told_not_to():
    assert build_parser().parse_args(["start"]).warm is True
    assert build_parser().parse_args(["start", "--no-warm"]).warm is False
