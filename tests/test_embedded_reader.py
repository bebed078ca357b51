"""One process owns the embedded store; the CLI's read commands still work beside it (two real
processes): they read the last durable state without the folder's lock, and writes are refused."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import TEST_DIMS
from servers import graphmem_command

OWNER = """
import json, sys
from graphmem import Memory
cfg = json.loads(sys.argv[1])
with Memory(cfg) as m:
    for line in sys.stdin:  # one message per line, added verbatim; "ok" after each
        m.add(line.strip(), user_id="alice", infer=False)
        print("ok", flush=True)
"""


def _cli(*args: str, config) -> subprocess.CompletedProcess:
    return subprocess.run(graphmem_command(*args, "--config", str(config)), capture_output=True, text=True, timeout=120)


def test_cli_reads_while_another_process_owns_the_store(tmp_path):
    cfg = {"embedder": {"provider": "hashing", "config": {"dims": TEST_DIMS}},
           "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "graph")}},
           "history_db_path": str(tmp_path / "history.db"),
           "llm": {"provider": "openai_compatible", "config": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}}}
    config = tmp_path / "config.json"
    config.write_text(json.dumps(cfg))
    owner = subprocess.Popen([sys.executable, "-c", OWNER, json.dumps(cfg)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    try:
        for text in ("I live in Lisbon", "I play the cello"):
            owner.stdin.write(text + "\n")
            owner.stdin.flush()
            assert owner.stdout.readline().strip() == "ok"
        listed = _cli("get-all", "--user", "alice", "--json", config=config)
        assert listed.returncode == 0, listed.stderr
        assert [m["memory"] for m in json.loads(listed.stdout)["results"]] == ["I live in Lisbon", "I play the cello"]
        found = _cli("search", "cello", "--user", "alice", "--json", config=config)
        assert json.loads(found.stdout)["results"][0]["memory"] == "I play the cello"
        mem_id = json.loads(found.stdout)["results"][0]["id"]
        history = _cli("history", mem_id, "--json", config=config)
        assert [e["event"] for e in json.loads(history.stdout)] == ["ADD"]

        owner.stdin.write("I moved to Porto\n")  # the reader sees what the owner made durable since
        owner.stdin.flush()
        assert owner.stdout.readline().strip() == "ok"
        listed = _cli("get-all", "--user", "alice", "--json", config=config)
        assert len(json.loads(listed.stdout)["results"]) == 3

        refused = _cli("delete-all", "--user", "alice", "--yes", config=config)  # a write needs the owner
        assert refused.returncode == 1 and "in use by another process" in refused.stderr and "Traceback" not in refused.stderr
    finally:
        owner.stdin.close()
        owner.wait(60)
    assert owner.returncode == 0, owner.stderr.read()
    listed = _cli("get-all", "--user", "alice", "--json", config=config)  # the owner compacted on close
    assert len(json.loads(listed.stdout)["results"]) == 3


def test_reader_sees_whole_records_across_compaction_and_cannot_write(tmp_path):
    import pytest

    from graphmem import Memory
    from graphmem.embeddings import HashingEmbedder
    from graphmem.errors import StoreError
    from graphmem.stores.embedded import EmbeddedStore
    from graphmem.types import Scope

    owner_store = EmbeddedStore(tmp_path / "g", TEST_DIMS, compact_every=3)
    llm_cfg = {"llm": {"provider": "openai_compatible", "config": {"base_url": "http://127.0.0.1:9/v1", "model": "m"}},
               "history_db_path": str(tmp_path / "h.db")}
    with Memory(llm_cfg, store=owner_store, embedder=HashingEmbedder(dims=TEST_DIMS)) as owner:
        for i in range(7):  # compacts twice; the journal holds the last record
            owner.add(f"fact number {i}", user_id="alice", infer=False)
            journal = tmp_path / "g" / "journal.jsonl"
            whole = journal.read_bytes()
            journal.write_bytes(whole + b"0000 {\"seq\": 99")  # an append in progress: a torn tail
            reader = EmbeddedStore(tmp_path / "g", TEST_DIMS, read_only=True)
            assert len(reader.list_memories(Scope.of(user_id="alice"))) == i + 1
            with pytest.raises(StoreError, match="read-only"):
                reader.delete_all(Scope.of(user_id="alice"))
            reader.close()
            assert journal.read_bytes().endswith(b"99")  # the reader left the owner's file alone
            journal.write_bytes(whole)
