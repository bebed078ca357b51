"""The public surface is pinned: ``graphmem.__all__``, ``graphmem.testing``, the LangGraph
integration, and every import path the docs, the README and the examples show resolves.

Moving a module (issue 26) must not move anything a user imports; these tests fail when it does.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import graphmem

ROOT = Path(__file__).resolve().parent.parent
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))

FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.S | re.M)
INLINE = re.compile(r"`([^`\n]+)`")
DOTTED = re.compile(r"\bgraphmem(?:\.[A-Za-z_]\w*)+")
FROM_IMPORT = re.compile(r"^\s*from\s+(graphmem[\w.]*)\s+import\s+(\([^)]*\)|[^\n#]+)", re.M)
PLAIN_IMPORT = re.compile(r"^\s*import\s+(graphmem[\w.]*)", re.M)
RUN_MODULE = re.compile(r"-m\s+(graphmem[\w.]*)")
FILE_SUFFIXES = {"json", "toml", "yaml", "yml", "db", "grass", "md", "py", "log", "sqlite"}


def resolve(path: str) -> object:
    """The object a dotted path names: the longest importable module prefix, then attributes."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj: object = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError as exc:
            if exc.name is None or not ".".join(parts[:cut]).startswith(exc.name):
                raise  # a dependency is missing, not the path
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr)
        return obj
    raise AssertionError(f"{path}: no importable prefix")


def code_paths(code: str) -> set[str]:
    """graphmem paths a block of code imports or runs with ``python -m``."""
    paths = set(PLAIN_IMPORT.findall(code)) | set(RUN_MODULE.findall(code))
    for module, names in FROM_IMPORT.findall(code):
        for name in names.strip("() \n").split(","):
            name = name.split(" as ")[0].strip()
            if name and name != "*":
                paths.add(f"{module}.{name}")
    return paths


def documented_paths() -> dict[str, str]:
    """Every graphmem path shown in the docs' and README's code (fenced or inline) and the examples,
    with where it was seen."""
    seen: dict[str, str] = {}
    for page in DOCS:
        text = page.read_text(encoding="utf-8")
        for block in FENCE.findall(text):
            seen.update(dict.fromkeys(code_paths(block), page.name))
        for inline in INLINE.findall(FENCE.sub("", text)):
            for path in DOTTED.findall(inline) + sorted(code_paths(inline)):
                if path.rsplit(".", 1)[-1] not in FILE_SUFFIXES:  # graphmem.json is a file name
                    seen.setdefault(path, page.name)
    for example in EXAMPLES:
        seen.update(dict.fromkeys(code_paths(example.read_text(encoding="utf-8")), example.name))
    return seen


def test_graphmem_all_is_pinned():
    assert graphmem.__all__ == [
        "AsyncMemory", "BM25_ONLY", "HYBRID", "VECTOR_ONLY",
        "ClosedError", "ConfigError", "EmbeddingError", "GraphMemError", "IdempotencyConflictError",
        "InvalidInputError", "LLMError", "LLMResponseError", "LLMUnavailableError", "LimitExceededError",
        "Memory", "MemoryConfig", "MissingScopeError", "NotFoundError", "SearchPreset",
        "StoreError", "StoreUnavailableError", "WriteOutcomeUnknown", "__version__",
    ]  # fmt: skip
    for name in graphmem.__all__:
        assert getattr(graphmem, name) is not None


def test_graphmem_testing_is_pinned():
    import graphmem.testing as testing

    assert testing.__all__ == ["DEFAULT_REPLIES", "FakeModel", "Fault", "RecordedRequest", "Rule", "ScriptedLLMServer"]
    assert testing.DEFAULT_REPLIES is importlib.import_module("graphmem.testing.scripted_server").DEFAULT_REPLIES
    assert [name for name in dir(testing) if not name.startswith("_") and name[0].isupper()] == sorted(
        n for n in testing.__all__ if n[0].isupper()
    )


def test_the_langgraph_integration_is_pinned():
    """No ``__all__`` there: its public names are the top-level definitions without a leading _."""
    module = importlib.import_module("graphmem.integrations.langgraph")
    tree = ast.parse(Path(module.__file__ or "").read_text(encoding="utf-8"))
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    defined |= {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
    public = {name for name in defined if not name.startswith("_")}
    assert public == {"ROLES", "SCOPE_KEYS", "State", "memory_tools", "recall_node", "remember_node", "scope_of", "to_messages"}
    for name in public:
        assert getattr(module, name) is not None


@pytest.mark.parametrize("package", ["graphmem.browser", "graphmem.embeddings", "graphmem.llm", "graphmem.retrieval", "graphmem.stores"])
def test_every_name_a_package_exports_resolves(package):
    module = importlib.import_module(package)
    for name in getattr(module, "__all__", []):
        assert getattr(module, name) is not None, f"{package}.{name}"


def test_the_docs_show_imports_the_scan_finds():
    """Guards the scan: it sees fenced, inline and example imports."""
    paths = documented_paths()
    assert {"graphmem.Memory", "graphmem.testing.FakeModel", "graphmem.launcher"} <= set(paths)
    assert "graphmem.integrations.langgraph.recall_node" in paths  # examples/langgraph_memory.py
    assert len(paths) >= 20


def test_every_documented_import_path_resolves():
    broken = []
    for path, where in sorted(documented_paths().items()):
        try:
            resolve(path)
        except (ImportError, AttributeError, AssertionError) as exc:
            broken.append(f"{where}: {path} ({type(exc).__name__}: {exc})")
    assert broken == []


def test_every_entry_point_resolves():
    import tomllib  # 3.11+, as in test_package

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    targets = list(project.get("scripts", {}).values())
    targets += [t for group in project.get("entry-points", {}).values() for t in group.values()]
    assert targets
    for target in targets:
        module, _, attr = target.partition(":")
        obj = resolve(f"{module}.{attr}" if attr else module)
        assert obj is not None
