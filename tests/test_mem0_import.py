"""graphmem import-mem0: a real SQLite file with mem0's history schema (and its exported memories)
into a graphmem store, through the CLI and the Python API."""

from __future__ import annotations

import json
import sqlite3

import pytest
from conftest import TEST_DIMS
from helpers import graph, llm_config, script

from graphmem import InvalidInputError, Memory
from graphmem.cli.main import main
from graphmem.compat.mem0_import import import_mem0

# mem0 1.0's history table, column for column
MEM0_HISTORY = """
CREATE TABLE IF NOT EXISTS history (
    id           TEXT PRIMARY KEY,
    memory_id    TEXT,
    old_memory   TEXT,
    new_memory   TEXT,
    event        TEXT,
    created_at   DATETIME,
    updated_at   DATETIME,
    is_deleted   INTEGER,
    actor_id     TEXT,
    role         TEXT
)
"""
ROWS = [
    ("h1", "mem-a", None, "Likes pizza", "ADD", "2023-01-01T10:00:00+00:00", None, 0, None, "user"),
    ("h2", "mem-a", "Likes pizza", "Loves pizza", "UPDATE", "2023-02-01T10:00:00+00:00", "2023-02-01T10:00:00+00:00", 0, None, "user"),
    ("h3", "mem-b", None, "Lives in Boston", "ADD", "2023-03-01T10:00:00+00:00", None, 0, None, "user"),
    ("h4", "mem-b", "Lives in Boston", None, "DELETE", "2024-01-01T10:00:00+00:00", None, 1, None, "user"),
    ("h5", "mem-c", None, "Works at Acme", "ADD", "2023-05-01T10:00:00+00:00", None, 0, None, "user"),
]
EXPORTED = {"results": [{
    "id": "mem-a", "memory": "Loves pizza", "hash": "x", "metadata": {"category": "food"},
    "created_at": "2023-01-01T10:00:00+00:00", "updated_at": "2023-02-01T10:00:00+00:00", "user_id": "alice",
}]}  # fmt: skip


@pytest.fixture
def mem0_files(tmp_path):
    db = tmp_path / "history.db"
    with sqlite3.connect(db) as conn:
        conn.execute(MEM0_HISTORY)
        conn.executemany("INSERT INTO history VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", ROWS)
    exported = tmp_path / "memories.json"
    exported.write_text(json.dumps(EXPORTED))
    return db, exported


@pytest.fixture
def config(server, tmp_path):
    return {
        "llm": llm_config(server),
        "embedder": {"provider": "hashing", "config": {"dims": TEST_DIMS}},
        "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "graph")}},
        "history_db_path": str(tmp_path / "graphmem-history.db"),
    }


def test_the_cli_imports_memories_and_their_history(mem0_files, config, tmp_path, capsys):
    db, exported = mem0_files
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(config))
    assert main(["import-mem0", str(db), "--memories", str(exported), "--user", "bob", "--config", str(cfg), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report == {"imported": 3, "deleted": 1, "skipped": 0, "history_rows": 5, "reextracted": 0}

    with Memory(config) as m:
        alice = m.get_all(user_id="alice")["results"]
        assert [(r["id"], r["memory"], r["metadata"], r["valid_at"]) for r in alice] == [
            ("mem-a", "Loves pizza", {"category": "food"}, "2023-01-01T10:00:00Z")
        ]
        assert sorted(r["memory"] for r in m.get_all(user_id="bob")["results"]) == ["Works at Acme"]
        assert m.get("mem-b") is None  # deleted in mem0: kept soft-deleted, for its history
        assert [(h["event"], h["new_memory"], h["created_at"]) for h in m.history("mem-a")] == [
            ("ADD", "Likes pizza", "2023-01-01T10:00:00Z"), ("UPDATE", "Loves pizza", "2023-02-01T10:00:00Z"),
        ]  # fmt: skip
        assert [h["event"] for h in m.history("mem-b")] == ["ADD", "DELETE"]
        # the memories live on mem0's times
        at = [r["memory"] for r in m.search("Boston", user_id="bob", as_of="2023-06-01T00:00:00Z")["results"]]
        assert "Lives in Boston" in at and "Lives in Boston" not in [r["memory"] for r in m.search("Boston", user_id="bob")["results"]]
        assert m.get_all(user_id="alice")["relations"] == []  # no graph without --reextract

    assert main(["import-mem0", str(db), "--memories", str(exported), "--user", "bob", "--config", str(cfg), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["skipped"] == 3  # re-running imports nothing twice


def test_reextract_rebuilds_the_graph_in_the_memories_time(mem0_files, config, server):
    db, exported = mem0_files
    script(server, graph([("alice", "person"), ("pizza", "food")], [("alice", "loves", "pizza")]))
    with Memory(config) as m:
        report = import_mem0(m, db, exported, user_id="bob", reextract=False)
        assert report.reextracted == 0
    with Memory({**config, "graph_store": {"provider": "embedded", "config": {"path": str(config["graph_store"]["config"]["path"]) + "2"}}}) as m:
        script(server, graph([("bob", "person"), ("Acme", "company")], [("bob", "works_at", "Acme")]))
        report = import_mem0(m, db, exported, user_id="bob", reextract=True)
        assert report.reextracted == 2 and server.calls("extract_facts") == 0  # graph only: the memories exist
        (rel,) = m.get_all(user_id="alice")["relations"]
        assert (rel["source"], rel["relationship"], rel["destination"], rel["valid_at"]) == ("alice", "LOVES", "pizza", "2023-01-01T10:00:00Z")
        assert len(m.get_all(user_id="alice")["results"]) == 1  # no duplicate memories


def test_a_file_that_is_not_a_mem0_history_is_refused(tmp_path, config):
    bad = tmp_path / "other.db"
    with sqlite3.connect(bad) as conn:
        conn.execute("CREATE TABLE history (id TEXT, text TEXT)")
    with Memory(config) as m:
        with pytest.raises(InvalidInputError, match="missing columns"):
            import_mem0(m, bad, user_id="bob")
        with pytest.raises(InvalidInputError, match="no mem0 history"):
            import_mem0(m, tmp_path / "nope.db", user_id="bob")
        (tmp_path / "garbage.db").write_text("not sqlite")
        with pytest.raises(InvalidInputError):
            import_mem0(m, tmp_path / "garbage.db", user_id="bob")
