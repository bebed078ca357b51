"""``graphmem doctor`` checks the embedder's precision against the one the store recorded (fp32,
int8: stores/precision.py), as the next command would, through the CLI's real entry point."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT, TEST_DIMS
from helpers import llm_config

from graphmem import Memory
from graphmem.embeddings import HashingEmbedder
from graphmem.errors import ConfigError
from graphmem.testing import ScriptedLLMServer

FIX = 'fix: set embedder.config.precision to "int8"'


def _doctor(tmp_path: Path, server: ScriptedLLMServer, graph_store: dict, dims: int) -> subprocess.CompletedProcess:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"llm": llm_config(server), "embedder": {"provider": "hashing", "config": {"dims": dims}},
                                  "graph_store": graph_store}))
    return subprocess.run([sys.executable, "-m", "graphmem.cli.main", "doctor", "--config", str(config)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def _embedded_store(path: Path, precision: str):
    from graphmem.stores.embedded import EmbeddedStore

    return EmbeddedStore(path=path, embedding_dims=64, embedder_precision=precision)


def test_doctor_reports_an_embedded_store_built_at_another_precision(tmp_path) -> None:
    """A store whose vectors were made at int8, checked with an fp32 embedder (hashing): the first
    add would fail with a ConfigError, so doctor fails and names the precision to configure."""
    int8, fp32 = tmp_path / "int8", tmp_path / "fp32"
    with ScriptedLLMServer() as server:
        for path, precision in ((int8, "int8"), (fp32, "fp32")):
            with Memory({"llm": llm_config(server), "history_db_path": str(tmp_path / f"{precision}.db")},
                        embedder=HashingEmbedder(dims=64), store=_embedded_store(path, precision)) as memory:
                memory.add("I keep bees", user_id="dee", infer=False)
        refused = _doctor(tmp_path, server, {"provider": "embedded", "config": {"path": str(int8)}}, 64)
        opened = _doctor(tmp_path, server, {"provider": "embedded", "config": {"path": str(fp32)}}, 64)
        with pytest.raises(ConfigError, match="holds int8 embeddings, not the fp32"):  # what doctor foretold
            Memory({"llm": llm_config(server), "embedder": {"provider": "hashing", "config": {"dims": 64}},
                    "graph_store": {"provider": "embedded", "config": {"path": str(int8)}}, "history_db_path": str(tmp_path / "h.db")})
    out = refused.stdout + refused.stderr
    assert refused.returncode == 1 and "Traceback" not in out and "ok: every stage works" not in out, out
    assert f"store: embedded store {int8}: FAILED: graph store {int8} holds int8 embeddings, not the fp32" in out
    assert FIX in out and "not ok" in out
    assert opened.returncode == 0, opened.stdout + opened.stderr
    assert f"store: embedded store {fp32} opens with 64-dimensional fp32 embeddings" in opened.stdout
    assert "embedder: hashing-64, 64 dimensions, fp32" in opened.stdout


@pytest.mark.neo4j
def test_doctor_reports_a_neo4j_database_recorded_at_another_precision(tmp_path, neo4j_uri, raw_driver, uid) -> None:
    from graphmem.stores.neo4j import Neo4jStore

    store = Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS, warm_plans=False)
    graph_store = {"provider": "neo4j", "config": {"url": neo4j_uri, "warm_plans": False}}
    with ScriptedLLMServer() as server:
        with Memory({"llm": llm_config(server), "history_db_path": str(tmp_path / "h.db")},
                    embedder=HashingEmbedder(dims=TEST_DIMS), store=store) as memory:
            memory.add("I keep bees", user_id=uid, infer=False)  # the database holds vectors
            raw_driver.execute_query("MERGE (r:EmbedderRecord {key: 'embedder'}) SET r.precision = 'int8'")
            try:
                refused = _doctor(tmp_path, server, graph_store, TEST_DIMS)
            finally:
                raw_driver.execute_query("MATCH (r:EmbedderRecord) DELETE r")
            opened = _doctor(tmp_path, server, graph_store, TEST_DIMS)
            memory.delete_all(user_id=uid)
    out = refused.stdout + refused.stderr
    assert refused.returncode == 1 and "Traceback" not in out, out
    assert "FAILED: graph store" in out and "holds int8 embeddings, not the fp32" in out and FIX in out
    assert opened.returncode == 0, opened.stdout + opened.stderr
    assert f"opens with {TEST_DIMS}-dimensional fp32 embeddings (fits the Neo4j vector indexes)" in opened.stdout
