"""Every program in examples/ runs offline (no OPENAI_API_KEY: graphmem's fake model) in its own
process, as a newcomer would run it, and prints what it promises."""

from __future__ import annotations

import ast
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

EXPECTED = {
    "quickstart.py": ["memory: Lives in Denver", "relation: alice LIVES_IN Denver", "relation: alice HAS_SISTER Ana"],
    "time_travel.py": ["lives in (as of 2021-01-01): Boston", "lives in (as of now): Denver",
                       "timeline: LIVES_IN Boston from 2019-03-01 until 2023-06-15", "timeline: LIVES_IN Denver from 2023-06-15 until now"],
    "langgraph_memory.py": ["I remember: Lives in Lisbon since last year"],
    "rest_client.py": ["added: ['Is allergic to peanuts']", "search: ['Is allergic to peanuts'] [('IS_ALLERGIC_TO', 'peanuts')]",
                       "bob's memories with alice's key: 403", "health: ok"],
    "tracing.py": ["graphmem.add [", "  graphmem.stage.invalidation [", "    chat graphmem-fake [", "gen_ai.usage.input_tokens=",
                   "  write [", "graphmem.search [", "  search_memories ["],
    "mcp_client.py": ["tools: add_memory, search_memory", "search: ['Daughter Mia starts school in September'] [('HAS_DAUGHTER', 'Mia')]"],
}


def test_every_example_is_covered():
    assert sorted(p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs_offline(name, tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "GRAPHMEM_BASE_URL", "GRAPHMEM_LLM_BASE_URL", "GRAPHMEM_CONFIG")}
    env["GRAPHMEM_HOME"] = str(tmp_path / "home")  # nothing of the machine's own config
    done = subprocess.run([sys.executable, str(EXAMPLES / name)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "using graphmem's fake model" in done.stdout
    for line in EXPECTED[name]:
        assert line in done.stdout, (line, done.stdout)


# --- what each example's docstring says to install is enough ------------------------------------

ROOT = EXAMPLES.parent


def _install_line(source: str) -> list[str]:
    """The packages of the docstring's `pip install ...` line (none: the plain install)."""
    found = re.search(r"^\s*pip install ([^#\n]*)", ast.get_docstring(ast.parse(source)) or "", flags=re.M)
    return shlex.split(found.group(1)) if found else []


def _imports(path: Path, seen: set[Path]) -> set[str]:
    """Top-level module names an example imports, its local helpers (examples/_*.py) followed."""
    seen.add(path)
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    for local in {n for n in names if (EXAMPLES / f"{n}.py").is_file()}:
        names.discard(local)
        if EXAMPLES / f"{local}.py" not in seen:
            names |= _imports(EXAMPLES / f"{local}.py", seen)
    return names - set(sys.stdlib_module_names) - {"__future__"}


def _closure(requirements: list[str], extras: set[str] | None = None) -> set[str]:
    """The distributions these requirements install (installed metadata gives the dependencies'
    own requirements; a marker is evaluated without extras for them)."""
    from importlib import metadata

    from packaging.requirements import Requirement
    from packaging.utils import canonicalize_name

    todo = [(Requirement(r), extras or {""}) for r in requirements]
    found: set[str] = set()
    while todo:
        req, active = todo.pop()
        if req.marker and not any(req.marker.evaluate({"extra": e}) for e in active):
            continue
        name = canonicalize_name(req.name)
        if name in found:
            continue
        found.add(name)
        try:
            todo += [(Requirement(r), {"", *req.extras}) for r in metadata.requires(req.name) or []]
        except metadata.PackageNotFoundError:
            pass  # not installed here: its own dependencies cannot be read, the name itself counts
    return found


def _installed_by(line: list[str]) -> set[str]:
    """What `pip install LINE` brings: graphmem's dependencies and the extras named (read from
    pyproject.toml, the file the install reads), plus any other package the line names."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements, extras = list(project["dependencies"]), set()
    for word in [w for w in line if w != "-e"]:
        named = re.fullmatch(r"(graphmem|\.)\[([\w,-]+)\]|graphmem|\.", word)
        if named:
            extras |= set((named.group(2) or "").split(",")) - {""}
        else:
            requirements.append(word)
    for extra in extras:
        requirements += project["optional-dependencies"][extra]
    return _closure(requirements)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_the_docstring_install_line_covers_every_import(name):
    """`pip install 'graphmem[server]'` then `python examples/rest_client.py` failed on `import httpx`
    (issue 46): every module an example imports comes with what its docstring says to install."""
    from importlib import metadata

    from packaging.utils import canonicalize_name

    source = (EXAMPLES / name).read_text(encoding="utf-8")
    installed = _installed_by(_install_line(source))
    providers = metadata.packages_distributions()
    missing = sorted(module for module in _imports(EXAMPLES / name, set()) - {"graphmem"}
                     if not {canonicalize_name(d) for d in providers.get(module, [module])} & installed)
    assert not missing, f"examples/{name} imports {missing}, which its docstring's install line ({_install_line(source)}) does not bring"


def test_the_install_check_sees_a_missing_client():
    # the check itself: the server extra alone does not bring httpx; named on the line, it comes
    assert "httpx" not in _installed_by(["-e", ".[server]"]) and "httpx" in _installed_by(["graphmem[server]", "httpx"])
    assert {"fastapi", "uvicorn", "starlette", "neo4j"} <= _installed_by(["graphmem[server]"])
