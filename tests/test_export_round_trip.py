"""Export fixed (issue 22): --as-user renames the scope's own node and everything keyed on the user,
memory facts are exported in every format, and a JSON export loads into a fresh store (both kinds)
where search finds what was exported."""

from __future__ import annotations

import json
import re
import uuid

import networkx as nx
import pytest
from conftest import TEST_DIMS, make_store
from helpers import graph, make_memory, script

from graphmem.cli.main import main
from graphmem.lifecycle.export import read_graph, retarget, to_cypher, to_graphml, to_json
from graphmem.lifecycle.load import load_graph, read_export
from graphmem.types import Scope


def _fill(memory, server, uid):
    script(server, {"extract_facts": {"facts": ["Lives in Denver"]},
                    **graph([("I", "person"), ("Denver", "city")], [("I", "lives_in", "Denver")])})
    memory.add("I live in Denver", user_id=uid)
    memory.add("My badge number is 4471", user_id=uid, infer=False, metadata={"source": "hr"})


@pytest.fixture
def source(server, store, tmp_path, uid):
    m = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "h.db"), context={"summary_every": 0})
    _fill(m, server, uid)
    yield m
    m.close()


def test_as_user_renames_the_own_node_and_keys_memories_on_the_new_user(source, uid):
    exported = read_graph(source.store, Scope.of(user_id=uid))
    assert len(exported.memories) == 2  # memory facts are part of the export now
    copy = retarget(exported, Scope.of(user_id="bob"))
    assert {e.name for e in copy.entities} == {"bob", "Denver"} and uid not in {e.canonical for e in copy.entities}
    assert [(r.source, r.relationship, r.destination) for r in copy.relations] == [("bob", "LIVES_IN", "Denver")]
    assert {m.user_id for m in copy.memories} == {"bob"}
    assert not {e.id for e in copy.entities} & {e.id for e in exported.entities}
    ids = {e.id for e in copy.entities}
    assert all(r.source_id in ids and r.destination_id in ids for r in copy.relations)

    doc = json.loads(to_json(copy))
    assert doc["scope"]["user_id"] == "bob"
    assert sorted(m["memory"] for m in doc["memories"]) == ["Lives in Denver", "My badge number is 4471"]
    g = nx.read_graphml(_tmp_graphml(to_graphml(copy)), force_multigraph=True)
    assert sorted(d["memory"] for _, d in g.nodes(data=True) if d.get("kind") == "memory") == [
        "Lives in Denver", "My badge number is 4471"]
    script_text = to_cypher(exported, Scope.of(user_id="bob"))
    assert script_text.count("CREATE (:Memory") == 2 and "4471" in script_text


def _tmp_graphml(text: str):
    import io

    return io.BytesIO(text.encode("utf-8"))


def test_a_json_export_loads_into_a_fresh_store_and_search_finds_it(source, server, store, request, tmp_path, uid):
    kind = "neo4j" if type(store).__name__ == "Neo4jStore" else "embedded"
    exported = read_graph(source.store, Scope.of(user_id=uid))
    if kind == "neo4j":  # one database: the copy goes to a fresh user
        exported = retarget(exported, Scope.of(user_id=f"bob-{uuid.uuid4().hex[:8]}"))
    path = tmp_path / "export.json"
    path.write_text(to_json(exported), encoding="utf-8")
    fresh_store = make_store(kind, request, tmp_path / "fresh")
    target = make_memory(server, fresh_store, TEST_DIMS, history_db_path=str(tmp_path / "h2.db"), context={"summary_every": 0})
    try:
        loaded = read_export(path)
        who = loaded.scope.user_id
        assert load_graph(target, loaded) == {"entities": 2, "relations": 1, "memories": 2}
        found = target.search("badge number", user_id=who)
        assert found["results"][0]["memory"] == "My badge number is 4471" and found["results"][0]["metadata"] == {"source": "hr"}
        assert [(r["source"], r["destination"]) for r in target.search("Denver", user_id=who)["relations"]] == [(who, "Denver")]
        # the copy's "I" is its own node: the next add extends it instead of creating a second one
        script(server, {"extract_facts": {"facts": []}, **graph([("I", "person"), ("Lisbon", "city")], [("I", "works_in", "Lisbon")])})
        target.add("I work in Lisbon", user_id=who)
        names = [e.name for e in target.store.entities(Scope.of(user_id=who))]
        assert sorted(names) == sorted([who, "Denver", "Lisbon"])
        assert [e["event"] for e in target.history(found["results"][0]["id"])] == ["ADD"]
        with pytest.raises(Exception, match="already has data"):
            load_graph(target, loaded)
    finally:
        target.delete_all(user_id=who)
        target.close()


def test_cli_exports_a_user_with_only_memories_and_loads_it_as_another(tmp_path, capsys):
    def config(folder):
        path = tmp_path / f"{folder}.json"
        path.write_text(json.dumps({"embedder": {"provider": "hashing", "config": {"dims": TEST_DIMS}},
                                    "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / folder)}},
                                    "history_db_path": str(tmp_path / f"{folder}.db")}))
        return str(path)

    first, second = config("one"), config("two")
    assert main(["add", "I keep my passport in the blue drawer", "--user", "ann", "--no-infer", "--config", first]) == 0
    out = tmp_path / "ann.json"
    assert main(["export", "--user", "ann", "--format", "json", "--output", str(out), "--config", first]) == 0
    assert "0 entities, 0 relations and 1 memory" in capsys.readouterr().err
    assert main(["load", str(out), "--as-user", "zoe", "--config", second]) == 0
    assert "loaded 0 entities, 0 relations and 1 memory as 'zoe'" in capsys.readouterr().out
    assert main(["search", "passport", "--user", "zoe", "--config", second]) == 0
    assert "blue drawer" in capsys.readouterr().out
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    assert main(["load", str(bad), "--config", second]) == 2


@pytest.mark.neo4j
def test_cypher_export_with_memories_loads_into_neo4j(server, neo4j_uri, request, tmp_path, raw_driver):
    uid, copy = f"u-{uuid.uuid4().hex[:8]}", f"copy-{uuid.uuid4().hex[:8]}"
    store = make_store("neo4j", request, tmp_path)
    m = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "h.db"), context={"summary_every": 0})
    try:
        _fill(m, server, uid)
        text = to_cypher(read_graph(store, Scope.of(user_id=uid)), Scope.of(user_id=copy))
        with raw_driver.session() as session:
            for statement in (s for s in re.split(r";\n", text) if s.strip()):
                session.run("\n".join(line for line in statement.splitlines() if not line.startswith("//"))).consume()
        listed = m.get_all(user_id=copy)
        assert sorted(x["memory"] for x in listed["results"]) == ["Lives in Denver", "My badge number is 4471"]
        assert [(r["source"], r["destination"]) for r in listed["relations"]] == [(copy, "Denver")]
        assert m.search("badge 4471", user_id=copy, preset="bm25")["results"][0]["metadata"] == {"source": "hr"}
        assert m.get_all(user_id=copy, filters={"source": "hr"})["results"][0]["memory"] == "My badge number is 4471"
    finally:
        m.delete_all(user_id=uid)
        m.delete_all(user_id=copy)
        m.close()


def _versions(memory, user: str, own_names: tuple[str, ...]) -> set[tuple]:
    """Every relation version of a user with both time axes, the user's own node named "me"."""
    def name(n: str) -> str:
        return "me" if n in own_names else n
    found = memory.get_all(user_id=user, include_invalidated=True, limit=1000)["relations"]
    return {(name(r["source"]), r["relationship"], name(r["destination"]), r["valid_at"], r["invalid_at"], r["created_at"],
             r["expired_at"]) for r in found}


def _seen(memory, user: str, **when) -> set[tuple[str, str]]:
    found = memory.search("badminton sister Desmond Jesica dog", user_id=user, limit=50, **when)["relations"]
    return {(r["relationship"], r["destination"]) for r in found}


def test_a_load_keeps_every_relation_version_and_both_time_axes(server, store, request, tmp_path, uid):
    """An export with retired relations loads with them and with when graphmem learnt each one (and
    when each memory was stored), so the copy answers as_of and known_at questions as the original
    does (both stores)."""
    from test_browser import load_story

    kind = "neo4j" if type(store).__name__ == "Neo4jStore" else "embedded"
    original = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "h.db"), context={"summary_every": 0})
    load_story(store, Scope.of(user_id=uid), TEST_DIMS)  # badminton learnt 2024-01-10, retired (and learnt so) 2024-06-15
    original.add("I love playing badminton on Sundays", user_id=uid, infer=False, timestamp="2024-01-10")
    bob = f"bob-{uuid.uuid4().hex[:8]}"
    exported = retarget(read_graph(store, Scope.of(user_id=uid), include_invalidated=True), Scope.of(user_id=bob))
    path = tmp_path / "export.json"
    path.write_text(to_json(exported), encoding="utf-8")
    target = make_memory(server, make_store(kind, request, tmp_path / "fresh"), TEST_DIMS, history_db_path=str(tmp_path / "h2.db"),
                         context={"summary_every": 0})
    try:
        counts = load_graph(target, read_export(path))
        versions = _versions(original, uid, (uid,))
        assert counts["relations"] == len(versions) == 5
        assert any(v[1] == "LOVES_PLAYING" and v[6] is not None for v in versions)  # the story has a retired version
        assert _versions(target, bob, (bob,)) == versions
        stored = {(m["memory"], m["created_at"], m["valid_at"]) for m in original.get_all(user_id=uid)["results"]}
        assert {(m["memory"], m["created_at"], m["valid_at"]) for m in target.get_all(user_id=bob)["results"]} == stored
        for when in ({}, {"as_of": "2024-04-01"}, {"known_at": "2024-05-01"}, {"known_at": "2024-02-01"},
                     {"as_of": "2024-04-01", "known_at": "2024-07-01"}):
            assert _seen(target, bob, **when) == _seen(original, uid, **when), when
        assert ("LOVES_PLAYING", "badminton") in _seen(target, bob, known_at="2024-05-01")  # its end was learnt later
        assert ("LOVES_PLAYING", "badminton") not in _seen(target, bob)
    finally:
        target.delete_all(user_id=bob)
        original.delete_all(user_id=uid)
        target.close()
        original.close()
