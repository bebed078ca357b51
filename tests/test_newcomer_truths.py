"""Issue 34's small truths: GET /graph travels in time without ``entity=``, `--as-of` errors name the
option, `graphmem export` reads while `graphmem serve` owns the embedded folder, `graphmem browse`
takes other launcher ports, and the launcher shows progress (its Maven log in a file, the tail on a
failure) and describes every argument."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from servers import free_port, graphmem_command, running
from test_inspector import serving

from graphmem import Memory
from graphmem.cli.main import main
from graphmem.errors import LauncherError
from graphmem.launcher import Neo4jLauncher, build_parser
from graphmem.testing import FakeModel
from graphmem.types import iso, utcnow


def _the_move(fake: FakeModel, folder: Path) -> tuple[Memory, str]:
    """Boston then Denver; returns the memory and an instant between the two adds."""
    fake.when("I live in Boston", facts=["Lives in Boston"], entities=[("I", "person"), ("Boston", "city")],
              relations=[("I", "lives_in", "Boston")])
    fake.when("I moved to Denver", facts=["Lives in Denver"], entities=[("I", "person"), ("Denver", "city")],
              relations=[("I", "lives_in", "Denver")], retire=[("I", "lives_in", "Boston")])
    memory = Memory(fake.config(store_path=folder / "graph", history_db_path=folder / "h.db"))
    memory.add("I live in Boston", user_id="alice", timestamp="2023-03-01")
    time.sleep(0.05)
    between = iso(utcnow())
    time.sleep(0.05)
    memory.add("I moved to Denver last month", user_id="alice", timestamp="2024-06-15")
    return memory, between


def test_graph_route_travels_in_time_without_an_entity(tmp_path):
    with FakeModel() as fake:
        memory, between = _the_move(fake, tmp_path)
        with memory, serving(memory, None) as url:
            def where(**params: str) -> list[str]:
                answer = httpx.get(f"{url}/graph", params={"user_id": "alice", **params}, timeout=30)
                assert answer.status_code == 200, answer.text
                return [r["destination"] for r in answer.json()["relations"]]

            assert where() == ["Denver"]
            assert where(as_of="2023-12-01") == ["Boston"]
            assert where(as_of="2022-01-01") == []
            assert where(known_at=between) == ["Boston"]  # before graphmem learnt of the move
            assert where(as_of="2023-12-01", known_at=between) == ["Boston"]
            refused = httpx.get(f"{url}/graph", params={"user_id": "alice", "as_of": "nope"}, timeout=30)
            assert refused.status_code in (400, 422) and "as_of" in refused.text, refused.text


def test_as_of_errors_name_the_option(capsys):
    for option in ("--as-of", "--known-at"):
        with pytest.raises(SystemExit) as exited:
            main(["search", "x", "--user", "a", option, "nope"])
        err = capsys.readouterr().err
        assert exited.value.code == 2 and f"argument {option}: not an ISO-8601 date/time: 'nope'" in err
        assert "timestamp" not in err


def _config(folder: Path, llm_url: str = "http://127.0.0.1:9/v1") -> Path:
    path = folder / "config.json"
    path.write_text(json.dumps({"llm": {"provider": "openai_compatible", "config": {"base_url": llm_url, "api_key": "k", "model": "m"}},
                                "embedder": {"provider": "hashing"},  # 256 dimensions, as the fake model's
                                "graph_store": {"provider": "embedded", "config": {"path": str(folder / "graph")}},
                                "history_db_path": str(folder / "h.db")}))
    return path


def test_export_reads_while_serve_owns_the_embedded_folder(tmp_path):
    config = _config(tmp_path)
    port = free_port()
    with running(graphmem_command("serve", "--no-auth", "--port", str(port), "--config", str(config)),
                 f"http://127.0.0.1:{port}/health", tmp_path / "serve.log"):
        added = httpx.post(f"http://127.0.0.1:{port}/memories", json={"messages": [{"role": "user", "content": "I keep bees"}], "user_id": "dee", "infer": False}, timeout=30)
        assert added.status_code == 200, added.text
        done = subprocess.run(graphmem_command("export", "--format", "json", "--user", "dee", "--config", str(config)),
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert [m["memory"] for m in json.loads(done.stdout)["memories"]] == ["I keep bees"]


def test_browse_on_the_embedded_store_takes_other_ports(tmp_path):
    """The launcher's Neo4j goes to the ports given: a taken bolt port is named, with the options that choose others."""
    with FakeModel() as fake:
        memory, _ = _the_move(fake, tmp_path)
        memory.close()
    config = _config(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        bolt = taken.getsockname()[1]
        done = subprocess.run(graphmem_command("browse", "--user", "alice", "--bolt-port", str(bolt), "--http-port", str(free_port()),
                                               "--config", str(config)), capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"port {bolt} on 127.0.0.1 is already in use" in done.stderr
    assert "--bolt-port B --http-port H" in done.stderr and "Traceback" not in done.stderr


def test_launcher_help_describes_every_argument():
    parser = build_parser()
    for action in parser._actions:
        assert action.help, action.dest
    assert all(word in parser.format_help() for word in ("build:", "start:", "stop:", "status:"))


def test_launcher_build_shows_progress_and_the_log_tail_on_failure(tmp_path, monkeypatch, capsys):
    """Maven's output goes to .neo4j/build.log; the terminal gets a progress line, and on a failure the
    log's last lines without colour codes."""
    root = tmp_path / "repo"
    (root / "neo4j-launcher").mkdir(parents=True)
    (root / "neo4j-launcher" / "pom.xml").write_text("<project/>")
    mvn = tmp_path / "mvn"
    mvn.write_text("#!/bin/sh\nfor i in $(seq 1 200); do printf '\\033[1;34m[INFO]\\033[m line %s\\n' $i; done\n"
                   "echo '[ERROR] the build broke'\nprintf '\\033[0m\\033[0m'\nexit 3\n")
    mvn.chmod(0o755)
    monkeypatch.setenv("GRAPHMEM_MVN", str(mvn))
    launcher = Neo4jLauncher(root=root)
    monkeypatch.setattr(Neo4jLauncher, "java_home", property(lambda self: Path(sys.prefix)))
    with pytest.raises(LauncherError) as failed:
        launcher._build()
    err = capsys.readouterr().err
    assert "building the Neo4j launcher with Maven" in err and "line 100" not in err
    message = str(failed.value)
    assert "Maven exit 3" in message and "[ERROR] the build broke" in message and "[INFO] line 200" in message
    assert "\x1b" not in message and "[0m" not in message and "line 150" not in message
    assert "line 1\n" in (root / ".neo4j" / "build.log").read_text().replace("\x1b[1;34m", "").replace("\x1b[m", "")


def test_a_folder_built_by_another_embedder_is_refused_when_memory_opens_with_the_fix(tmp_path):
    """The README's path (the hashing quickstart, then another embedder on the same folder) stops at
    construction, before any add, with the command that fixes it."""
    from graphmem.errors import ConfigError

    store = {"provider": "embedded", "config": {"path": str(tmp_path / "graph")}}
    with Memory({"embedder": {"provider": "hashing"}, "graph_store": store, "history_db_path": str(tmp_path / "h.db")}) as memory:
        memory.add("I prefer window seats", user_id="alice", infer=False)
    with FakeModel(dims=64) as fake, pytest.raises(ConfigError) as refused:
        Memory(fake.config(graph_store=store, history_db_path=str(tmp_path / "h.db")))
    assert fake.calls() == 0
    message = str(refused.value)
    assert "holds 256-dimensional embeddings, not the 64 of the configured embedder" in message
    assert "graphmem init --data-dir DIR --force" in message and "graph_store.config.path" in message
