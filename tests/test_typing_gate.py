"""The type check CI runs is strict, and what it lets through says why (issue 26).

`.ci/run` runs `mypy graphmem`; these tests keep that command meaning `mypy --strict`, every
`# type: ignore` narrow (an error code) and explained, and AsyncMemory's typed coroutines in step
with Memory's public methods (the typed list is for type checkers only, so nothing else checks it).
"""

from __future__ import annotations

import re
from pathlib import Path

from graphmem.aio import public_methods
from graphmem.memory import Memory

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "graphmem"


def test_mypy_config_is_strict_and_ci_runs_it():
    section = (ROOT / "pyproject.toml").read_text().split("\n[tool.mypy]\n", 1)[1].split("\n[", 1)[0]
    assert re.search(r"^strict = true\b", section, re.MULTILINE)
    assert 'packages = ["graphmem"]' in section
    assert ".venv/bin/mypy graphmem" in (ROOT / ".ci" / "run").read_text()


def test_every_type_ignore_names_its_error_code_and_a_reason():
    bare = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if "type: ignore" in line and not re.search(r"# type: ignore\[[a-z-]+(, [a-z-]+)*\]  # \S", line):
                bare.append(f"{path.relative_to(ROOT)}:{number}")
    assert bare == []


def test_async_memory_types_every_public_method_of_memory():
    source = (PACKAGE / "aio.py").read_text()
    mirrored = sorted(re.findall(r"^\s+(\w+) = _mirror\(Memory\.(\1)\)$", source, re.MULTILINE))
    assert [name for name, _ in mirrored] == public_methods(Memory)
