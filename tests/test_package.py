"""Packaging, public API, resources, config secrets and the CLI's documentation."""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

import graphmem
from graphmem.cli.main import build_parser, main
from graphmem.config import MemoryConfig
from graphmem.errors import ConfigError, GraphMemError
from graphmem.schema.resources import list_cypher, list_prompts, load_cypher
from graphmem.stages.base import PromptTemplate

ROOT = Path(__file__).resolve().parent.parent


def test_public_api_is_pinned():
    assert sorted(graphmem.__all__) == sorted([
        "AsyncMemory", "BM25_ONLY", "HYBRID", "VECTOR_ONLY", "ClosedError", "ConfigError", "EmbeddingError", "GraphMemError",
        "IdempotencyConflictError", "InvalidInputError", "LimitExceededError", "WriteOutcomeUnknown",
        "LLMError", "LLMResponseError", "LLMUnavailableError", "Memory", "MemoryConfig", "MissingScopeError",
        "NotFoundError", "SearchPreset", "StoreError", "StoreUnavailableError", "__version__",
    ])
    for name in graphmem.__all__:
        assert hasattr(graphmem, name)


def test_every_error_derives_from_the_root():
    import graphmem.errors as errors

    for name in errors.__all__:
        assert issubclass(getattr(errors, name), GraphMemError)


def test_every_cypher_file_loads_and_is_parameterised():
    names = list_cypher()
    assert len(names) >= 10
    for name in names:
        text = load_cypher(name)
        assert text.strip(), name
        # no Python formatting holes: values arrive as $parameters, never pasted into the text
        assert not re.search(r"\{\s*\}|\{[a-z_]+\}|%s|%\(", text), name


def test_every_prompt_parses_with_its_declared_placeholders():
    names = list_prompts()
    assert {"extract_graph.txt", "establish_relationships.txt", "delete_graph_memory.txt"} <= set(names)
    for name in names:
        template = PromptTemplate.load(name)
        assert template.purpose, name
        rendered = template.render(**{p: f"<{p}>" for p in template.placeholders})
        assert "{{" not in rendered


def test_prompt_checks_catch_undeclared_placeholders():
    with pytest.raises(ConfigError):
        PromptTemplate.parse("x", "# placeholders: a\n---\nuses {{b}}")


def test_secrets_never_appear_in_reprs():
    cfg = MemoryConfig.load({
        "llm": {"provider": "openai", "config": {"api_key": "sk-SECRET-1"}},
        "embedder": {"provider": "openai", "config": {"api_key": "sk-SECRET-2"}},
        "graph_store": {"provider": "neo4j", "config": {"url": "bolt://x:7687", "password": "SECRET-3"}},
    })
    text = repr(cfg) + str(cfg) + repr(cfg.graph_store.settings())
    assert "SECRET" not in text


def test_config_errors_are_clear():
    with pytest.raises(ConfigError, match="provider"):
        MemoryConfig.load({"llm": {"provider": "nope"}})
    with pytest.raises(ConfigError, match="graph_store"):
        MemoryConfig.load({"graph_store": {"provider": "mysql"}})
    MemoryConfig.load({"vector_store": {"provider": "qdrant"}, "version": "v1.1"})  # mem0 keys are accepted


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A real wheel built by hatchling from this checkout."""
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(ROOT)],
        check=True,
    )
    (built,) = out.glob("graphmem-*.whl")
    return built


def test_wheel_ships_cypher_prompts_launcher_project_and_license(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in list_cypher():
        assert f"graphmem/cypher/{name}.cypher" in names
    for name in list_prompts():
        assert f"graphmem/prompts/{name}" in names
    assert "graphmem/py.typed" in names
    assert "graphmem/neo4j-launcher/pom.xml" in names
    java = [n for n in names if n.startswith("graphmem/neo4j-launcher/src/") and n.endswith(".java")]
    assert java and all((ROOT / n.removeprefix("graphmem/")).is_file() for n in java)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)


def test_license_file_matches_pyproject():
    import tomllib

    meta = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    text = (ROOT / "LICENSE").read_text()
    assert meta["license"]["text"] == "Apache-2.0" and meta["license-files"] == ["LICENSE"]
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text


def test_installed_wheel_launcher_uses_its_packaged_project(wheel, tmp_path):
    """Installed from the wheel (no checkout around it), the launcher unpacks the pom and sources it
    ships and builds from there; its failures are LauncherErrors, reported without a traceback."""
    site = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)], check=True)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(site), "GRAPHMEM_HOME": str(tmp_path / "home"),
           "GRAPHMEM_MVN": str(tmp_path / "no-maven-here")}
    code = ("import graphmem.launcher as l, graphmem.errors as e\n"
            f"assert l.__file__.startswith({str(site)!r}), l.__file__\n"
            "n = l.Neo4jLauncher(bolt_port=7699, http_port=7499)\n"
            "print(n.project_dir, n.needs_build())\n"
            "try:\n    n.build()\nexcept e.LauncherError as x:\n    print('LauncherError', x)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    project = tmp_path / "home" / "launcher" / "neo4j-launcher"
    assert f"{project} True" in out.stdout and "LauncherError" in out.stdout
    assert (project / "pom.xml").read_bytes() == (ROOT / "neo4j-launcher" / "pom.xml").read_bytes()
    assert list(project.rglob("*.java"))
    cli = subprocess.run([sys.executable, "-m", "graphmem.launcher", "build"], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert cli.returncode == 1 and "\nerror: cannot build Neo4j" in cli.stderr and "Traceback" not in cli.stderr


def test_version_flag_prints_the_package_version(capsys):
    import tomllib

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert capsys.readouterr().out.strip() == f"graphmem {version}" == f"graphmem {graphmem.__version__}"


def test_every_cli_command_has_help_and_is_in_the_cli_docs():
    readme = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    helps = {a.dest: a.help for a in sub._choices_actions}
    for name, parser in sub.choices.items():
        assert parser.description and helps.get(name), name
        assert f"graphmem {name}" in readme, name
        for action in parser._actions:  # every option and argument explains itself
            assert action.help or action.dest in ("query", "entity", "memory_id"), (name, action.dest)


def test_cli_reports_graphmem_errors_without_a_traceback(capsys, tmp_path):
    bad = tmp_path / "c.json"
    bad.write_text("{not json")
    assert main(["search", "x", "--user", "u", "--config", str(bad)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("graphmem: error:") and "Traceback" not in err


def test_results_match_their_typed_shapes(tmp_path):
    """The TypedDicts of graphmem.results describe what Memory returns: every key is declared, every
    required key is there, events are the MemoryEvent literals."""
    from typing import get_args

    from graphmem import Memory
    from graphmem.embeddings import HashingEmbedder
    from graphmem.results import MEMORY_EVENTS, AddedMemory, AddResult, MemoryEvent, MemoryResult, RelationResult, SearchResult

    assert set(get_args(MemoryEvent)) == set(MEMORY_EVENTS) == {"ADD", "UPDATE", "DELETE"}
    llm = {"provider": "openai_compatible", "config": {"base_url": "http://127.0.0.1:9/v1", "api_key": "unused"}}
    config = {"llm": llm, "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "g")}},
              "history_db_path": str(tmp_path / "h.db")}
    with Memory(config, embedder=HashingEmbedder(dims=32)) as m:
        added = m.add("Likes green tea", user_id="ann", metadata={"k": 1}, infer=False)
        found = m.search("green tea", user_id="ann")
        listed = m.get_all(user_id="ann")
        one = m.get(added["results"][0]["id"])
        history = m.history(added["results"][0]["id"])
    assert set(added) == set(AddResult.__annotations__)
    for result in (found, listed):
        assert set(result) == set(SearchResult.__annotations__)
    for item in [*found["results"], *listed["results"], one]:
        assert set(item) <= set(MemoryResult.__annotations__) and MemoryResult.__required_keys__ <= set(item)
    (item,) = added["results"]
    assert set(item) <= set(AddedMemory.__annotations__) and AddedMemory.__required_keys__ <= set(item)
    assert item["event"] in MEMORY_EVENTS
    assert {r["event"] for r in history} <= set(MEMORY_EVENTS)
    assert set(RelationResult.__required_keys__) >= {"source", "relationship", "destination", "valid_at", "invalid_at"}
