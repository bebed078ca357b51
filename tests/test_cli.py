"""The command line against a scripted LLM server and a real embedded store."""

from __future__ import annotations

import json

import pytest
from helpers import graph, script

from graphmem.cli.main import main


@pytest.fixture
def config(server, tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({
        "llm": {"provider": "openai_compatible", "config": {"base_url": server.base_url, "api_key": "k", "retry_wait": 0.01}},
        "embedder": {"provider": "hashing", "config": {"dims": 64}},
        "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "graph")}},
        "history_db_path": str(tmp_path / "history.db"),
    }))
    return str(path)


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_add_search_get_all_timeline_history_delete(server, config, capsys):
    script(server, graph([("Boston", "place")], [("I", "lives_in", "Boston")]))
    server.enqueue("extract_facts", {"facts": ["Lives in Boston"]})
    code, out, _ = run(capsys, "add", "I live in Boston", "--user", "ann", "--timestamp", "2023-03-01", "--config", config)
    assert code == 0 and "ADD" in out and "LIVES_IN" in out and "Lives in Boston" in out
    script(server, graph([("Denver", "place")], [("I", "lives_in", "Denver", "2024-05-15")], deletions=[("ann", "lives_in", "Boston")]))
    run(capsys, "add", "I moved to Denver last month", "--user", "ann", "--timestamp", "2024-06-15", "--config", config)

    code, out, _ = run(capsys, "search", "where do I live?", "--user", "ann", "--as-of", "2023-12-01", "--json", "--config", config)
    assert code == 0 and {r["destination"] for r in json.loads(out)["relations"]} == {"Boston"}
    code, out, _ = run(capsys, "get-all", "--user", "ann", "--include-invalidated", "--json", "--config", config)
    data = json.loads(out)
    assert len(data["relations"]) == 2 and data["results"][0]["memory"] == "Lives in Boston"
    code, out, _ = run(capsys, "timeline", "me", "--user", "ann", "--config", config)
    assert out.index("Boston") < out.index("Denver") and "valid until 2024-05-15" in out
    code, out, _ = run(capsys, "history", data["results"][0]["id"], "--config", config)
    assert "ADD" in out and "Lives in Boston" in out
    code, out, _ = run(capsys, "delete-all", "--user", "ann", "--yes", "--config", config)
    assert code == 0
    _, out, _ = run(capsys, "get-all", "--user", "ann", "--json", "--config", config)
    assert json.loads(out) == {"results": [], "relations": []}


def test_add_prints_its_id_which_history_and_json_carry(server, config, capsys):
    code, out, _ = run(capsys, "add", "call the bank", "--user", "ann", "--no-infer", "--config", config)
    assert code == 0
    add_id = out.splitlines()[0].removeprefix("add ")
    assert out.startswith("add ") and len(add_id) >= 16
    code, out, _ = run(capsys, "add", "water the plants", "--user", "ann", "--no-infer", "--json", "--config", config)
    added = json.loads(out)
    assert code == 0 and added["add_id"] not in (add_id, None)
    code, out, _ = run(capsys, "history", added["results"][0]["id"], "--json", "--config", config)
    assert [row["add_id"] for row in json.loads(out)] == [added["add_id"]]
    code, out, _ = run(capsys, "history", added["results"][0]["id"], "--config", config)
    assert f"(add {added['add_id']})" in out


def test_errors_are_one_line_on_stderr(config, capsys):
    code, _, err = run(capsys, "get", "no-such-id", "--config", config)
    assert code == 1 and err.startswith("graphmem: error:") and "no-such-id" in err and "Traceback" not in err
    with pytest.raises(SystemExit) as exc:
        main(["search"])
    assert exc.value.code == 2


@pytest.mark.parametrize("argv", [
    ["search", "x"],  # no scope
    ["get-all"],
    ["search", "x", "--user", "u", "--limit", "0"],
    ["get-all", "--user", "u", "--limit", "-3"],
    ["search", "x", "--user", "u", "--as-of", "yesterday-ish"],
    ["add", "hi", "--user", "u", "--timestamp", "2024-13-45"],
    ["add", "hi", "--user", "u", "--metadata", "[1, 2]"],
    ["add", "hi", "--user", "u", "--metadata", "{not json"],
    ["search", "x", "--user", "u", "--filter", "nokey"],
    ["search", "x", "--user", "u", "--threshold", "high"],
])
def test_usage_errors_exit_2_before_anything_runs(argv, config, capsys):
    with pytest.raises(SystemExit) as exc:
        main([*argv, "--config", config])
    assert exc.value.code == 2
    assert "usage:" in capsys.readouterr().err


def test_invalid_input_found_by_the_library_exits_2(config, capsys):
    code, _, err = run(capsys, "get-all", "--user", "u", "--agent", "", "--config", config)
    assert code in (0, 2)  # an empty id is "not given"; whatever the library decides, never a traceback
    code, _, err = run(capsys, "search", "x", "--user", "u", "--filter", "a:=[1]", "--config", config)
    assert "Traceback" not in err


def test_get_update_delete_history_and_unknown_ids(server, config, capsys):
    code, out, _ = run(capsys, "add", "Likes green tea", "--user", "ann", "--no-infer", "--metadata", '{"source": "chat", "n": 2}',
                       "--json", "--config", config)
    assert code == 0 and server.calls() == 0  # --no-infer: no LLM request
    (added,) = json.loads(out)["results"]
    mid = added["id"]
    code, out, _ = run(capsys, "get", mid, "--json", "--config", config)
    assert code == 0 and json.loads(out)["memory"] == "Likes green tea" and json.loads(out)["metadata"] == {"source": "chat", "n": 2}
    code, out, _ = run(capsys, "search", "green tea", "--user", "ann", "--filter", "source=chat", "--filter", "n:=2", "--json", "--config", config)
    assert [m["id"] for m in json.loads(out)["results"]] == [mid]
    code, out, _ = run(capsys, "search", "green tea", "--user", "ann", "--filter", "source=email", "--json", "--config", config)
    assert json.loads(out)["results"] == []
    code, out, _ = run(capsys, "search", "green tea", "--user", "ann", "--threshold", "0.999", "--json", "--config", config)
    assert code == 0 and all(m["score"] >= 0.999 for m in json.loads(out)["results"])
    code, out, _ = run(capsys, "update", mid, "Likes black tea", "--config", config)
    assert code == 0 and "Likes black tea" in out
    code, out, _ = run(capsys, "history", mid, "--config", config)
    assert "ADD" in out and "UPDATE" in out and "Likes black tea" in out
    code, out, _ = run(capsys, "delete", mid, "--config", config)
    assert code == 0 and mid in out
    code, _, err = run(capsys, "get", mid, "--config", config)
    assert code == 1 and f"no memory with id {mid!r}" in err
    code, _, err = run(capsys, "history", "0000-unknown", "--config", config)
    assert code == 1 and "no memory with id '0000-unknown'" in err
    code, _, err = run(capsys, "update", "0000-unknown", "x", "--config", config)
    assert code == 1 and "0000-unknown" in err


def test_get_all_help_says_it_lists_memories(capsys):
    with pytest.raises(SystemExit):
        main(["get-all", "--help"])
    assert "memor" in capsys.readouterr().out.lower()


def test_demo_runs_on_scripted_answers_and_says_so(capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("GRAPHMEM_LLM_BASE_URL", raising=False)
    code, out, _ = run(capsys, "demo")
    first = out.splitlines()[0]
    assert code == 0 and "SCRIPTED" in first
    assert "(Jesica) -[HAS_PET]-> (dog)" in out and "[invalidated" in out
    assert "LLM calls 0" in out.split("search(")[1]  # search makes no LLM call


@pytest.mark.neo4j
def test_demo_on_a_neo4j_of_other_dimensions_adapts_or_says_how_to_proceed(neo4j_uri, tmp_path, capsys, monkeypatch):
    """A database keeps the embedding size it was made with (issue 46: the demo on a Neo4j first used
    by the offline profile failed on 256 vs 384). The demo's own hashing embedder takes the database's
    size; an embedder the config names of another size is refused with the ways on."""
    from conftest import TEST_DIMS
    from test_browser import neo4j_dims

    from graphmem.stores.neo4j import Neo4jStore

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("GRAPHMEM_LLM_BASE_URL", raising=False)
    store = Neo4jStore(url=neo4j_uri, embedding_dims=neo4j_dims(neo4j_uri))  # the schema exists from here on
    store.setup()
    store.close()
    dims = neo4j_dims(neo4j_uri)
    config = tmp_path / "other.json"
    config.write_text(json.dumps({"embedder": {"provider": "hashing", "config": {"dims": dims + 8}}}))
    code, out, err = run(capsys, "demo", "--store", "neo4j", "--neo4j-url", neo4j_uri, "--config", str(config))
    assert code == 1 and f"has {dims} dimensions, but embedding_dims={dims + 8}" in err, err
    assert f"The database at {neo4j_uri} holds {dims}-dimensional embeddings from another embedder" in err
    assert "--neo4j-url bolt://HOST:PORT" in err and "graphmem demo --store embedded" in err
    assert "scripted model" not in err  # the config names an embedder: the scripted run would keep it

    code, out, _ = run(capsys, "demo", "--store", "neo4j", "--neo4j-url", neo4j_uri)
    assert code == 0 and "(Jesica) -[HAS_PET]-> (dog)" in out, out
    adapted = f"The Neo4j database holds {dims}-dimensional embeddings: the demo's hashing embedder makes {dims} too."
    assert (adapted in out) == (dims != 384), (dims, TEST_DIMS)
