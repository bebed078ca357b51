"""The benchmarks' layout: scripts grouped by what they measure, every module importable under its
group, commands named by their module path, workers found where their drivers start them."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
GROUPS = {"retrieval", "cost", "scale", "peers", "faults", "data"}
# workers run as files by another interpreter (mem0's venv, a fresh process): importing them is harmless
# but they read their job from argv, so they have no --help
MODULES = sorted(p for p in BENCH.glob("*/*.py") if p.parent.name in GROUPS and p.name != "__init__.py")


def test_only_shared_code_is_loose() -> None:
    loose = sorted(p.name for p in BENCH.glob("*.py"))
    assert loose == ["__init__.py", "common.py"]
    folders = {p.name for p in BENCH.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))}
    assert folders == GROUPS | {"results"}
    for group in GROUPS:
        assert (BENCH / group / "__init__.py").exists(), group


@pytest.mark.parametrize("path", MODULES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_module_imports_under_its_group(path: Path) -> None:
    module = importlib.import_module(f"benchmarks.{path.parent.name}.{path.stem}")
    assert module.__doc__, "a benchmark says what it measures"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_commands_name_the_module_path(path: Path) -> None:
    text = path.read_text()
    name = f"benchmarks.{path.parent.name}.{path.stem}"
    for prog in re.findall(r'prog="python -m ([\w.]+)"', text):
        assert prog == name
    for command in re.findall(r"python -m (benchmarks\.[\w.]+)", text):
        importlib.import_module(command)  # every command a docstring shows names a module that exists


def test_workers_and_statements_are_found() -> None:
    from benchmarks.cost import cold_start
    from benchmarks.peers import add_modes, mem0_compare
    from benchmarks.scale import scale_ops

    for worker in (mem0_compare.WORKER, add_modes.WORKER, cold_start.CHILD):
        assert worker.is_file(), worker
    for name in ("mem0_schema", "mem0_load", "mem0_search", "mem0_population"):
        assert (scale_ops.CYPHER / f"{name}.cypher").is_file()


def test_docs_commands_name_modules_that_exist() -> None:
    texts = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
    for doc in texts:
        for command in set(re.findall(r"python -m (benchmarks\.[a-z0-9_.]*[a-z0-9_])", doc.read_text())):
            if "<" not in command:
                importlib.import_module(command)
