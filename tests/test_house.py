"""The house rules of the package (STYLE.md, issue 46 item 8) kept by a test, counted with ``ast``
like tests/test_layers.py: functions under 50 lines, few loose modules at graphmem's top, and the
facade only delegating the verbatim add."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "graphmem"
MAX_FUNCTION_LINES = 50
MAX_LOOSE_MODULES = 8


def _functions(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [(node.name, (node.end_lineno or node.lineno) - node.lineno + 1) for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)]


def test_every_function_is_under_fifty_lines():
    long = [f"{path.relative_to(PACKAGE.parent)}:{name} ({size} lines)"
            for path in sorted(PACKAGE.rglob("*.py")) for name, size in _functions(path) if size > MAX_FUNCTION_LINES]
    assert long == [], "split by concern: " + ", ".join(long)


def test_few_loose_modules_at_the_top():
    loose = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert len(loose) <= MAX_LOOSE_MODULES, f"{len(loose)} loose modules: {loose}; move what belongs to a package into it"


def test_the_facade_only_delegates_the_verbatim_add():
    tree = ast.parse((PACKAGE / "memory.py").read_text(encoding="utf-8"))
    methods = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    assert not {"_add_verbatim", "_verbatim_outcome"} & methods  # ingest/verbatim_add.py holds the infer=False add
