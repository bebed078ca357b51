"""The documentation is tested like code (sqlite-utils' test_docs habit): every CLI command and
option is in docs/cli.md, every config key graphmem accepts is in docs/configuration.md (and no key
documented there is one graphmem refuses), the quickstarts of the README and of
docs/getting-started.md run and print what they say, and the site builds with ``mkdocs build --strict``.

The quickstart with an LLM runs against the project's scripted OpenAI-compatible server (the real
``openai`` client over HTTP, chat and embeddings); the offline one must make no request at all.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

from graphmem.cli.main import build_parser
from graphmem.compat import mem0_config as mem0_compat
from graphmem.config import EmbeddedSettings, MemoryConfig, Neo4jSettings
from graphmem.embeddings import PROVIDERS, HashingEmbedder, OnnxEmbedder, OpenAIEmbedder
from graphmem.testing.scripted_server import ScriptedLLMServer, hashed_vectors

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"

# --- CLI ------------------------------------------------------------------------------------------


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    parser = build_parser()
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    assert len(actions) == 1
    return dict(actions[0].choices)


def _section(text: str, heading: str) -> str | None:
    """The text under ``heading`` (a whole line) up to the next heading of the same or a higher
    level, outside code fences (a ``# comment`` in a code block is not a heading)."""
    level = len(heading.split(" ", 1)[0])
    lines = text.splitlines()
    if heading not in lines:
        return None
    out: list[str] = []
    fenced = False
    for line in lines[lines.index(heading) + 1 :]:
        if line.startswith("```"):
            fenced = not fenced
        marks = len(line) - len(line.lstrip("#"))
        if not fenced and 0 < marks <= level and line[marks : marks + 1] == " ":
            break
        out.append(line)
    return "\n".join(out)


def test_cli_has_commands():
    # the introspection below must see the real command set, not an empty one
    assert {"add", "search", "get-all", "serve", "mcp", "import"} <= set(_subcommands())


@pytest.mark.parametrize("name", sorted(_subcommands()))
def test_every_cli_command_and_option_is_documented(name):
    text = (DOCS / "cli.md").read_text(encoding="utf-8")
    section = _section(text, f"## `graphmem {name}`")
    assert section is not None, f"docs/cli.md has no section '## `graphmem {name}`'"
    sub = _subcommands()[name]
    options = sorted({o for a in sub._actions for o in a.option_strings if o.startswith("--") and o != "--help"})
    missing = [o for o in options if f"`{o}`" not in section]
    assert not missing, f"graphmem {name}: options not documented in its docs/cli.md section: {missing}"


def test_every_cli_command_has_help_text():
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help for c in sub._choices_actions}
    assert set(helps) == set(sub.choices)
    assert all(h and h.strip() for h in helps.values()), helps


# --- configuration ------------------------------------------------------------------------------


def _models_in(annotation: Any) -> list[tuple[str, type[BaseModel]]]:
    """(path suffix, model) for every pydantic model inside a field's annotation: the model itself
    (suffix ""), or the values of a dict of models (suffix ".<name>")."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [("", annotation)]
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is dict and len(args) == 2:
        return [(".<name>" + suffix, model) for suffix, model in _models_in(args[1])]
    return [found for arg in args for found in _models_in(arg)]


def _walk(model: type[BaseModel], prefix: str, seen: set[type], out: set[str]) -> None:
    for name, field in model.model_fields.items():
        path = prefix + name
        out.add(path)
        for suffix, sub in _models_in(field.annotation):
            if sub not in seen:  # graph_store.llm is an LLMConfig like llm: documented once, as a whole
                seen.add(sub)
                _walk(sub, f"{path}{suffix}.", seen, out)


def _parameters(cls: type) -> list[str]:
    import inspect

    return [p for p in inspect.signature(cls.__init__).parameters if p != "self"]


def accepted_config_keys() -> set[str]:
    """Every key a graphmem config may hold, read from the config models, the embedders' and the
    stores' settings, and the mem0 keys graphmem maps or ignores."""
    keys: set[str] = set()
    _walk(MemoryConfig, "", {MemoryConfig}, keys)
    embedders = {"hashing": HashingEmbedder, "onnx": OnnxEmbedder, "openai": OpenAIEmbedder}
    assert set(embedders) == set(PROVIDERS), "a new embedder provider: add it here and document its options"
    keys |= {f"embedder.config.{p}" for cls in embedders.values() for p in _parameters(cls)}
    keys |= {f"graph_store.config.{f}" for s in (Neo4jSettings, EmbeddedSettings) for f in s.model_fields}
    keys |= set(mem0_compat.IGNORED_TOP)
    keys |= {f"llm.config.{k}" for k in (*mem0_compat._BASE_URL_ALIASES, *mem0_compat._IGNORED_LLM)}
    keys |= {f"embedder.config.{k}" for k in (*mem0_compat._EMBEDDER_BASE_URL_ALIASES, *mem0_compat._IGNORED_EMBEDDER)}
    keys |= {"embedder.config.embedding_dims", "graph_store.config.base_label"}
    return keys


def test_config_introspection_sees_the_keys():
    keys = accepted_config_keys()
    assert {"llm.config.model", "graph_store.threshold", "context.recent_messages", "embedder.config.model_dir",
            "graph_store.config.url", "graph_store.ontology.entity_types.<name>.attributes"} <= keys


def test_every_config_key_is_documented():
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    missing = sorted(k for k in accepted_config_keys() if f"`{k}`" not in text)
    assert not missing, f"config keys missing from docs/configuration.md: {missing}"


def test_configuration_documents_no_key_graphmem_refuses():
    accepted = accepted_config_keys()
    tops = {k.split(".")[0] for k in accepted}
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    documented = {m for m in re.findall(r"^\| `([^`]+)`", text, flags=re.M) if m.split(".")[0] in tops}
    assert len(documented) > 50
    unknown = sorted(documented - accepted)
    assert not unknown, f"docs/configuration.md documents keys graphmem does not accept: {unknown}"


def test_documented_config_example_loads():
    # the first example of the page is a real config (the onnx folder is only checked when built)
    text = (DOCS / "configuration.md").read_text(encoding="utf-8")
    block = re.search(r"```python\n(.*?)```", text, flags=re.S)
    assert block is not None
    config = re.search(r"Memory\.from_config\((\{.*\})\)", block.group(1), flags=re.S)
    assert config is not None
    source = re.sub(r"#[^\n]*", "", config.group(1))
    loaded = MemoryConfig.load(ast.literal_eval(source))
    assert loaded.graph_store.provider == "neo4j" and loaded.embedder.provider == "onnx"


# --- quickstarts ----------------------------------------------------------------------------------


def _quickstart_blocks(path: Path, language: str) -> list[str]:
    section = _section(path.read_text(encoding="utf-8"), "## Quickstart")
    assert section is not None, f"{path.name} has no '## Quickstart' section"
    return re.findall(rf"```{language}\n(.*?)```", section, flags=re.S)


def _expected_output(block: str) -> list[str]:
    """The block's trailing comment lines: what it prints, line for line."""
    lines = block.rstrip("\n").splitlines()
    expected = []
    while lines and lines[-1].startswith("# "):
        expected.insert(0, lines.pop()[2:])
    return expected


def _reply(tool: str | None, body: dict) -> dict | None:
    """The scripted model of the quickstart: answers about the newest message as a good model would."""
    newest = next((m["content"] for m in reversed(body.get("messages", [])) if m.get("role") == "user"), "")
    newest = newest.split("New messages")[-1]
    city = "Denver" if "Denver" in newest else "Boston"
    if tool == "extract_entities":
        return {"entities": [{"entity": "I", "entity_type": "person"}, {"entity": city, "entity_type": "place"}]}
    if tool == "establish_relationships":
        return {"relations": [{"source": "I", "relationship": "lives_in", "destination": city}]}
    if tool == "extract_facts":
        return {"facts": [f"Lives in {city}"]}
    if tool == "delete_graph_memory" and city == "Denver":
        return {"relations": [{"source": "alice", "relationship": "LIVES_IN", "destination": "Boston"}]}
    return None


@pytest.fixture
def model_server():
    # Memory()'s default embedder is OpenAI's text-embedding-3-small: 1536 dimensions
    with ScriptedLLMServer(embedder=lambda texts, dims: hashed_vectors(texts, 1536)) as server:
        server.set_handler(_reply)
        yield server


def _env(tmp_path: Path, server: ScriptedLLMServer) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHMEM_", "OPENAI_"))}
    bin_dir = str(Path(sys.executable).parent)
    return {**env, "GRAPHMEM_HOME": str(tmp_path / "home"), "OPENAI_API_KEY": "sk-docs-test",
            "OPENAI_BASE_URL": server.base_url, "PATH": bin_dir + os.pathsep + env.get("PATH", "")}


QUICKSTART_BLOCKS = [(path, i) for path in (README, DOCS / "getting-started.md")
                     for i in range(len(_quickstart_blocks(path, "python")))]


def test_quickstarts_have_python_blocks():
    assert len([1 for path, _ in QUICKSTART_BLOCKS if path == README]) >= 2
    assert len([1 for path, _ in QUICKSTART_BLOCKS if path != README]) >= 2


@pytest.mark.parametrize(("path", "index"), QUICKSTART_BLOCKS, ids=[f"{p.name}-{i}" for p, i in QUICKSTART_BLOCKS])
def test_quickstart_python_block_runs_and_prints_what_it_says(path, index, tmp_path, model_server):
    block = _quickstart_blocks(path, "python")[index]
    expected = _expected_output(block)
    assert expected, f"{path.name} quickstart block {index} should end with the lines it prints, as # comments"
    script = tmp_path / "quickstart.py"
    script.write_text(block, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=_env(tmp_path, model_server),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == expected
    if "infer=False" in block and "Memory()" not in block:
        assert model_server.requests == [], "the offline quickstart made an LLM request"
        assert model_server.embedding_calls == 0
    else:
        assert model_server.calls("extract_facts") == 2 and model_server.calls("delete_graph_memory") >= 1


def test_getting_started_shell_block_runs(tmp_path, model_server):
    blocks = _quickstart_blocks(DOCS / "getting-started.md", "bash")
    assert len(blocks) == 1 and "graphmem add" in blocks[0]
    done = subprocess.run(["bash", "-euo", "pipefail", "-c", blocks[0]], cwd=tmp_path, env=_env(tmp_path, model_server),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("I prefer window seats on long flights") == 3  # add, search, get-all
    assert model_server.requests == [] and model_server.embedding_calls == 0


def _readme_shell_with_a_free_port(block: str, port: int) -> str:
    """The README's shell block as written, but with the fake model on a free port (the README's 8790
    may be taken on a shared machine) and the config pointing there."""
    assert block.count("graphmem fake-llm ") == 1 and block.count("graphmem init ") == 1
    return (block.replace("graphmem fake-llm ", f"graphmem fake-llm --port {port} ")
            .replace("graphmem init ", f"graphmem init --llm-base-url http://127.0.0.1:{port}/v1 "))


def test_readme_runs_top_to_bottom_in_one_home(tmp_path, model_server):
    """Every Python and shell block of the README's quickstart, in order, in one fresh HOME and one
    folder, as a newcomer follows it: each embedder's default store is its own, so the hashing
    quickstart after Memory() (and the shell's offline profile after both) finds no store of another
    embedder in its way (issue 46: the second block ended in "holds 1536-dimensional embeddings")."""
    from servers import free_port

    section = _section(README.read_text(encoding="utf-8"), "## Quickstart")
    assert section is not None
    blocks = re.findall(r"```(python|bash)\n(.*?)```", section, flags=re.S)
    assert [lang for lang, _ in blocks] == ["python", "python", "bash"], [lang for lang, _ in blocks]
    work = tmp_path / "project"
    work.mkdir()
    (work / "examples").symlink_to(ROOT / "examples")  # the shell block names examples/moves.json
    env = _env(tmp_path, model_server)
    for index, (lang, block) in enumerate(blocks):
        if lang == "python":
            (work / f"block{index}.py").write_text(block, encoding="utf-8")
            command = [sys.executable, f"block{index}.py"]
        else:
            command = ["bash", "-euo", "pipefail", "-c", _readme_shell_with_a_free_port(block, free_port())]
        done = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, f"README quickstart block {index} ({lang}) failed:\n{done.stdout}\n{done.stderr}"
        if lang == "python":
            assert done.stdout.splitlines() == _expected_output(block), index
    lines = done.stdout.splitlines()
    searched = lines[max(i for i, line in enumerate(lines) if line.startswith("INVALIDATE")) + 1 :]
    assert searched and "Lives in Denver" in searched[0], done.stdout  # "first: Lives in Denver"
    assert any(line.startswith("alice -[LIVES_IN]-> Denver") for line in searched), done.stdout
    home = tmp_path / "home"
    assert sorted(p.name for p in home.iterdir() if p.name.startswith("graph")) == ["graph", "graph-hashing-256"]


def test_testing_page_fixture_example_passes(tmp_path):
    # the documented pytest example, run by pytest with the plugin the install registers
    blocks = re.findall(r"```python\n(.*?)```", (DOCS / "testing.md").read_text(encoding="utf-8"), flags=re.S)
    assert blocks and "fake_model" in blocks[0]
    (tmp_path / "test_documented.py").write_text(blocks[0], encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHMEM_", "OPENAI_"))}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_documented.py"],
                          cwd=tmp_path, env={**env, "GRAPHMEM_HOME": str(tmp_path / "home")},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


# --- the site ---------------------------------------------------------------------------------------


def test_readme_is_short_and_its_links_resolve():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 400
    assert "./scripts/test.sh" in text  # the command CI's .ci/run runs
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    assert links
    broken = [link for link in links if "://" not in link and not (ROOT / link).exists()]
    assert not broken, broken


def test_every_docs_page_is_in_the_nav():
    nav = set(re.findall(r":\s*(\S+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), flags=re.M))
    pages = {p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md")}
    assert pages == nav, f"pages not in nav: {sorted(pages - nav)}; nav entries without a page: {sorted(nav - pages)}"


def test_mkdocs_build_strict(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "configuration" / "index.html").is_file()


def test_every_python_block_of_the_docs_is_valid_python():
    # the blocks outside the quickstarts are not run (they need a key, a server or data), but they parse
    pages = [README, *sorted(DOCS.glob("*.md"))]
    blocks = [(page.name, block) for page in pages
              for block in re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)]
    assert len(blocks) > 8
    for name, block in blocks:
        compile(block, name, "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT | ast.PyCF_ONLY_AST)


def test_every_json_block_of_the_docs_is_json():
    import json

    blocks = [block for page in sorted(DOCS.glob("*.md"))
              for block in re.findall(r"```json\n(.*?)```", page.read_text(encoding="utf-8"), flags=re.S)]
    assert blocks
    for block in blocks:
        json.loads(block)
