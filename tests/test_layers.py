"""The package layout holds: lower layers never import higher ones, and no module imports itself
back through others (import circles, ``TYPE_CHECKING`` imports included).

Own analysis of the source with ``ast`` rather than import-linter: it reads every import statement,
lazy ones inside functions and ``TYPE_CHECKING`` ones included, without importing graphmem (no
optional extra needs to be installed), adds no dependency, and its table below is the layer order in
one place. The layers, lowest first (graphmem/__init__.py says the same in words):

    foundation   errors (with redact), types, results, schema, launcher, home, observability (tracing)
    models       llm, stages, embeddings
    stores       stores (neo4j, embedded; one contract)
    core         retrieval, ingest, lifecycle, compat
    facade       config, factory, memory, aio
    interfaces   cli, server, ui, browser, integrations, testing
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "graphmem"

FOUNDATION = {"errors", "types", "results", "schema", "launcher", "home", "observability"}
MODELS = {"llm", "stages", "embeddings"}
CORE = {"retrieval", "ingest", "lifecycle", "compat"}
FACADE = {"config", "factory", "memory", "aio"}
INTERFACES = {"cli", "server", "ui", "browser", "integrations", "testing"}

#: What each unit (a package, or a module at graphmem's top) may import besides itself.
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "types": {"errors", "results"},
    "results": {"errors", "llm"},  # Usage: llm/usage.py's token counts, a TypedDict
    "schema": {"errors", "types"},
    "launcher": {"errors", "home"},
    "home": set(),
    "observability": {"errors"},  # spans every layer opens: it knows nothing of theirs
    "embeddings": {"errors", "types", "schema", "home", "observability"},
    "llm": {"errors", "types", "results", "schema", "stages", "observability"},  # structured output reads the stages' tool schemas
    "stages": {"errors", "types", "results", "schema", "llm", "observability"},
    "stores": FOUNDATION | {"embeddings"},
    "retrieval": FOUNDATION | MODELS | {"stores"},
    "ingest": FOUNDATION | MODELS | {"stores", "retrieval", "lifecycle", "config", "memory"},
    "lifecycle": FOUNDATION | MODELS | {"stores", "ingest", "config", "factory", "memory"},
    "compat": FOUNDATION | MODELS | {"stores", "lifecycle", "memory"},
    "config": {"errors", "types", "schema", "compat", "home", "observability"},
    "factory": FOUNDATION | MODELS | {"stores", "config"},
    "memory": FOUNDATION | MODELS | CORE | {"stores", "config", "factory"},
    "aio": FOUNDATION | MODELS | CORE | FACADE,
}
#: The facade reached from below only to build a Memory for a command: ``graphmem import``
#: (ingest/importer.py), ``graphmem load`` (lifecycle/load.py), ``graphmem reindex``
#: (lifecycle/reindex.py) and ``graphmem migrate``
#: (compat/mem0_import.py) run there, and bulk_host.py names MemoryConfig for a type only.
FACADE_FROM_BELOW = {
    ("graphmem.ingest.importer", "graphmem.memory"),
    ("graphmem.ingest.bulk_host", "graphmem.config"),
    ("graphmem.lifecycle.load", "graphmem.memory"),
    ("graphmem.lifecycle.reindex", "graphmem.memory"),
    ("graphmem.lifecycle.export", "graphmem.config"),
    ("graphmem.lifecycle.export", "graphmem.factory"),
    ("graphmem.lifecycle.retention", "graphmem.config"),
    ("graphmem.compat.mem0_import", "graphmem.memory"),
}


@dataclass(frozen=True)
class Import:
    source: str  # importing module
    target: str  # imported graphmem module (or package)
    line: int
    type_checking: bool


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def unit(module: str) -> str:
    """The layer unit of a module: its subpackage, or the module itself at the top."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _targets(node: ast.Import | ast.ImportFrom, module: str, is_package: bool, known: set[str]) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names]
    base = node.module or ""
    if node.level:
        parts = module.split(".") if is_package else module.split(".")[:-1]
        parts = parts[: len(parts) - node.level + 1]
        base = ".".join(parts + ([node.module] if node.module else []))
    return [f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names]


def _type_checking_nodes(tree: ast.Module) -> set[int]:
    inside: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            inside.update(id(n) for stmt in node.body for n in ast.walk(stmt))
    return inside


def imports(root: Path = PACKAGE) -> list[Import]:
    """Every import of a module of ``root``'s package, resolved to the deepest module that exists."""
    files = {module_name(p, root): p for p in root.rglob("*.py")}
    known = set(files)
    found = []
    for module, path in files.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        checking = _type_checking_nodes(tree)
        for node in ast.walk(tree):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target in _targets(node, module, path.name == "__init__.py", known):
                while target not in known and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target in known and target != root.name and target != module and not module.startswith(target + "."):
                    found.append(Import(module, target, node.lineno, id(node) in checking))
    return found


def circles(found: list[Import]) -> list[list[str]]:
    graph = nx.DiGraph((i.source, i.target) for i in found)
    return sorted(sorted(c) for c in nx.strongly_connected_components(graph) if len(c) > 1)


def crossings(found: list[Import], units: set[str], forbidden: set[str]) -> list[str]:
    """Imports from a module of ``units`` into a unit of ``forbidden``, as readable lines."""
    return [
        f"{i.source}:{i.line} imports {i.target}"
        for i in found
        if unit(i.source) in units and unit(i.target) in forbidden and unit(i.target) != unit(i.source)
    ]


@pytest.fixture(scope="module")
def found() -> list[Import]:
    return imports()


def test_the_analysis_sees_imports_of_every_kind(found):
    """Guards the guard: a lazy import inside a function and a TYPE_CHECKING import are both seen."""
    pairs = {(i.source, i.target, i.type_checking) for i in found}
    assert ("graphmem.memory", "graphmem.ingest.bulk", False) in pairs
    assert ("graphmem.ingest.importer", "graphmem.memory", False) in pairs  # inside run()
    assert ("graphmem.ingest.bulk_host", "graphmem.config", True) in pairs


def test_a_planted_circle_and_a_planted_crossing_are_caught(tmp_path):
    pkg = tmp_path / "graphmem"
    (pkg / "stores").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "stores" / "__init__.py").write_text('"""Stores."""\n')
    (pkg / "stores" / "base.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from graphmem.memory import Memory\n")
    (pkg / "memory.py").write_text("from .stores import base\n")
    found = imports(pkg)
    assert circles(found) == [["graphmem.memory", "graphmem.stores.base"]]
    assert crossings(found, {"stores"}, FACADE) == ["graphmem.stores.base:3 imports graphmem.memory"]


def test_no_import_circles_type_checking_ones_included(found):
    assert circles(found) == []


def test_stores_import_nothing_above_them(found):
    assert crossings(found, {"stores"}, CORE | FACADE | INTERFACES) == []


def test_stages_never_import_stores(found):
    assert crossings(found, {"stages"}, {"stores"}) == []


def test_nothing_below_the_interfaces_imports_an_interface(found):
    below = FOUNDATION | MODELS | {"stores"} | CORE | FACADE
    assert crossings(found, below, INTERFACES) == []


def test_schema_imports_only_errors_and_types(found):
    assert [f"{i.source} imports {i.target}" for i in found if unit(i.source) == "schema" and unit(i.target) not in {"schema", "errors", "types"}] == []


def test_the_core_reaches_the_facade_only_where_listed(found):
    """ingest, lifecycle and compat sit below the facade; the few commands that build a Memory are
    listed in FACADE_FROM_BELOW, so a new upward import fails here until it is argued for."""
    upward = {(i.source, i.target) for i in found if unit(i.source) in CORE and unit(i.target) in FACADE}
    assert upward <= FACADE_FROM_BELOW, sorted(upward - FACADE_FROM_BELOW)


def test_every_unit_imports_only_what_its_layer_allows(found):
    wrong = [
        f"{i.source}:{i.line} imports {i.target}"
        for i in found
        if unit(i.source) in ALLOWED and unit(i.target) != unit(i.source) and unit(i.target) not in ALLOWED[unit(i.source)]
    ]
    assert wrong == []


def test_every_unit_has_a_layer():
    units = {unit(module_name(p, PACKAGE)) for p in PACKAGE.rglob("*.py")} - {"graphmem", "__main__"}
    assert units - set(ALLOWED) - INTERFACES == set()


def test_every_package_says_what_it_owns_and_may_import():
    for init in sorted(PACKAGE.rglob("__init__.py")):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8")))
        assert doc, f"{init.relative_to(PACKAGE.parent)} has no docstring"
        if init.parent.parent == PACKAGE:  # graphmem's own subpackages say what they may import
            assert "may import" in doc.lower(), f"{init.relative_to(PACKAGE.parent)}'s docstring does not say what it may import"
