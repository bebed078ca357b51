"""The command line against a scripted LLM server and a real embedded store."""

from __future__ import annotations

import json

import pytest
from helpers import graph, script

from graphmem.cli import main


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


def test_errors_are_one_line_on_stderr(config, capsys):
    code, _, err = run(capsys, "search", "x", "--config", config)
    assert code == 1 and err.startswith("graphmem: error:") and "user_id" in err
    with pytest.raises(SystemExit) as exc:
        main(["search"])
    assert exc.value.code == 2


def test_demo_runs_on_scripted_answers_and_says_so(capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("GRAPHMEM_LLM_BASE_URL", raising=False)
    code, out, _ = run(capsys, "demo")
    first = out.splitlines()[0]
    assert code == 0 and "SCRIPTED" in first
    assert "(Jesica) -[HAS_PET]-> (dog)" in out and "[invalidated" in out
    assert "LLM calls 0" in out.split("search(")[1]  # search makes no LLM call
