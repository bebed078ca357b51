"""Issue 22's smaller truths, on both stores: what add() says about its relations, delete_all's
counts, an update that changes nothing, metadata keys a filter could not name, a past
expiration_date, and the CLI's empty listings."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from conftest import TEST_DIMS
from helpers import graph, make_memory, script

from graphmem import InvalidInputError
from graphmem.types import Scope, iso, utcnow


@pytest.fixture
def memory(server, store, tmp_path):
    m = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "history.db"), context={"summary_every": 0})
    yield m
    m.close()


def _tell(memory, server, uid, text, relations, facts):
    script(server, {"extract_facts": {"facts": facts}, **graph([("I", "person"), ("Denver", "city")], relations)})
    return memory.add(text, user_id=uid)


def test_add_relations_carry_the_fields_a_read_returns(memory, server, uid):
    first = _tell(memory, server, uid, "I live in Denver", [("I", "lives_in", "Denver")], ["Lives in Denver"])
    (rel,) = first["relations"]
    assert {"id", "created_at", "expired_at", "mentions", "event"} <= set(rel)
    assert rel["event"] == "ADD" and rel["expired_at"] is None and rel["mentions"] == 1
    (stored,) = memory.get_all(user_id=uid)["relations"]
    assert rel["id"] == stored["id"] and rel["created_at"] == stored["created_at"]
    again = _tell(memory, server, uid, "Still in Denver", [("I", "lives_in", "Denver")], [])
    (bumped,) = again["relations"]
    assert bumped["id"] == rel["id"] and bumped["mentions"] == 2  # the same instance, one more mention


def test_delete_all_counts_memories_too(memory, uid):
    memory.add(["first note", "second note"], user_id=uid, infer=False)
    result = memory.delete_all(user_id=uid)
    assert result["deleted_memories"] == 2 and result["deleted_entities"] == 0
    assert result["message"].startswith("Deleted 2 memories")
    assert memory.get_all(user_id=uid)["results"] == []


def test_updating_a_memory_to_its_own_text_writes_nothing(memory, uid):
    (item,) = memory.add("I like tea", user_id=uid, infer=False)["results"]
    assert memory.update(item["id"], "I like tea")["message"] == "Memory unchanged"
    assert [e["event"] for e in memory.history(item["id"])] == ["ADD"]
    memory.update(item["id"], "I like green tea")
    assert [e["event"] for e in memory.history(item["id"])] == ["ADD", "UPDATE"]


@pytest.mark.parametrize("key", ["bad\x00key", "soft\u00adhyphen", " padded", "trailing ", ""])
def test_metadata_keys_a_filter_refuses_are_refused_at_add(memory, uid, key):
    with pytest.raises(InvalidInputError) as at_add:
        memory.add("note", user_id=uid, infer=False, metadata={key: 1})
    with pytest.raises(InvalidInputError) as at_search:
        memory.search("note", user_id=uid, filters={key: 1})
    assert str(at_add.value).split(": ", 1)[1] == str(at_search.value).split(": ", 1)[1]  # the same message
    assert memory.get_all(user_id=uid)["results"] == []  # nothing stored


def test_a_past_expiration_date_is_accepted_expired_at_once_and_purged(memory, uid):
    memory.add("old imported note", user_id=uid, infer=False, expiration_date="2001-01-01")
    memory.add("old exact note", user_id=uid, infer=False, expiration_date=iso(utcnow() - timedelta(days=3)))
    memory.add("kept note", user_id=uid, infer=False)
    assert [m["memory"] for m in memory.get_all(user_id=uid)["results"]] == ["kept note"]
    assert memory.purge_expired()["memories"] == 2
    assert [i.text for i in memory.store.list_memories(Scope.of(user_id=uid))] == ["kept note"]


def test_cli_says_when_there_are_no_memories(tmp_path, capsys):
    from graphmem.cli.main import main

    config = tmp_path / "config.json"
    config.write_text(json.dumps({"embedder": {"provider": "hashing", "config": {"dims": TEST_DIMS}},
                                  "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "graph")}},
                                  "history_db_path": str(tmp_path / "h.db")}))
    assert main(["add", "a note", "--user", "u", "--no-infer", "--config", str(config)]) == 0
    assert main(["delete-all", "--user", "u", "--yes", "--config", str(config)]) == 0
    out = capsys.readouterr().out
    assert "Deleted 1 memory" in out
    assert main(["get-all", "--user", "u", "--config", str(config)]) == 0
    assert capsys.readouterr().out.splitlines() == ["(no memories)", "(no relations)"]


def test_the_demo_lines_the_readme_shows_are_what_the_demo_prints(tmp_path, monkeypatch, capsys):
    from pathlib import Path

    from graphmem.cli.main import main

    for var in ("OPENAI_API_KEY", "GRAPHMEM_LLM_BASE_URL", "GRAPHMEM_BASE_URL", "GRAPHMEM_CONFIG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GRAPHMEM_HOME", str(tmp_path))
    assert main(["demo"]) == 0
    printed = capsys.readouterr().out
    root = Path(__file__).resolve().parent.parent
    pages = [root / "README.md", *sorted((root / "docs").glob("**/*.md"))]
    shown = [line for page in pages for line in page.read_text(encoding="utf-8").splitlines()
             if line.startswith("> ") and "[LLM calls" in line]
    for line in shown:  # whatever the README and docs choose to show of the demo, it is what the demo prints
        assert line in printed.splitlines(), line
