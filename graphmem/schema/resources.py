"""Files graphmem ships next to its code: Cypher statements (cypher/) and prompt templates (prompts/).

In a source checkout they live at the repository root; a wheel maps them into the package as
``graphmem/cypher`` and ``graphmem/prompts``. The package copy wins when both exist, so an installed
graphmem never reads files from whatever directory happens to sit above it.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

from graphmem.errors import ConfigError

_PACKAGE_DIR = Path(__file__).resolve().parents[1]  # graphmem/ (this file is graphmem/schema/resources.py)
_REPO_ROOT = _PACKAGE_DIR.parent
_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")

CYPHER_SUFFIX = ".cypher"


def _folders(kind: str) -> list[Path]:
    """Where files of one kind may live, in order of preference (existing folders only)."""
    return [folder for folder in (_PACKAGE_DIR / kind, _REPO_ROOT / kind) if folder.is_dir()]


def _check_name(kind: str, name: str) -> None:
    # Names come from code, but a name is still never allowed to walk out of its folder.
    if not isinstance(name, str) or not _NAME.match(name) or ".." in name:
        raise ConfigError(f"invalid {kind} resource name: {name!r}")


def _find(kind: str, name: str, suffixes: tuple[str, ...]) -> Path:
    _check_name(kind, name)
    folders = _folders(kind)
    for folder in folders:
        for suffix in suffixes:
            path = folder / (name + suffix)
            if path.is_file():
                return path
    searched = ", ".join(str(folder) for folder in folders) or f"no {kind}/ folder found"
    raise ConfigError(f"{kind} file {name!r} not found (searched: {searched})")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from exc


@cache
def load_cypher(name: str) -> str:
    """The text of ``cypher/<name>.cypher`` (``name`` may include the suffix)."""
    stem = name[: -len(CYPHER_SUFFIX)] if name.endswith(CYPHER_SUFFIX) else name
    return _read(_find("cypher", stem, (CYPHER_SUFFIX,)))


@cache
def load_prompt(name: str) -> str:
    """The text of a prompt template in ``prompts/``: ``name`` with its suffix, or the bare stem."""
    _check_name("prompts", name)
    for folder in _folders("prompts"):
        exact = folder / name
        if exact.is_file():
            return _read(exact)
        matches = sorted(path for path in folder.glob(name + ".*") if path.is_file())
        if len(matches) > 1:
            found = ", ".join(path.name for path in matches)
            raise ConfigError(f"prompt {name!r} is ambiguous in {folder}: {found}")
        if matches:
            return _read(matches[0])
    return _read(_find("prompts", name, ("",)))  # raises ConfigError naming the prompt


def _list(kind: str, suffix: str | None) -> list[str]:
    names: set[str] = set()
    for folder in _folders(kind):
        for path in folder.iterdir():
            if not path.is_file() or path.name.startswith("."):
                continue
            if suffix is None:
                names.add(path.name)
            elif path.suffix == suffix:
                names.add(path.stem)
    return sorted(names)


def list_cypher() -> list[str]:
    """Names (without suffix) of every shipped Cypher statement."""
    return _list("cypher", CYPHER_SUFFIX)


def list_prompts() -> list[str]:
    """File names of every shipped prompt template."""
    return _list("prompts", None)


__all__ = ["list_cypher", "list_prompts", "load_cypher", "load_prompt"]
