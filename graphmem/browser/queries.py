"""The saved Neo4j Browser queries (cypher/browser/) and the one statement a Browser URL carries.

Every view starts with a *binding line* that names its parameters once, for example::

    WITH $user_id AS user_id, $agent_id AS agent_id, $run_id AS run_id, $entity AS entity

and uses only those variables below it. Run by hand in Browser, the file takes ``:param`` values as
usual. For a URL, :func:`bound_statement` replaces the binding line with literals
(``WITH "alice" AS user_id, null AS agent_id, ...``) so the editor holds one statement that shows
its graph when run; Browser runs a ``:param`` line plus a query as a multi-statement frame that
shows no result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from graphmem.errors import ConfigError, InvalidInputError
from graphmem.schema.literals import cypher_value

_PACKAGE_DIR = Path(__file__).resolve().parent.parent
#: The installed copy (wheel: graphmem/cypher/browser) wins over a source checkout's cypher/browser.
_FOLDERS = (_PACKAGE_DIR / "cypher" / "browser", _PACKAGE_DIR.parent / "cypher" / "browser")
_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
_PURPOSE = re.compile(r"^// purpose: (.+)$")
_BINDING_LINE = re.compile(r"^WITH (\$\w+ AS \w+(?:, \$\w+ AS \w+)*)$")
_BINDING = re.compile(r"^\$(\w+) AS (\w+)$")

#: The saved views, in the order the README and ``graphmem browse --query`` list them.
VIEWS = ("user_graph", "entity_neighbourhood", "history", "changes", "provenance", "entity_memories")
SCOPE_PARAMETERS = ("user_id", "agent_id", "run_id")


@dataclass(frozen=True)
class SavedQuery:
    """One cypher/browser file: its purpose line, its text and (for views) its parameters."""

    name: str
    text: str
    purpose: str
    parameters: tuple[str, ...]  # from the binding line; empty for graphmem's own statements

    @property
    def extra_parameters(self) -> tuple[str, ...]:
        """Parameters other than the scope ids (e.g. ``entity``, ``from``)."""
        return tuple(p for p in self.parameters if p not in SCOPE_PARAMETERS)


def query_folder() -> Path:
    for folder in _FOLDERS:
        if folder.is_dir():
            return folder
    raise ConfigError(f"cypher/browser not found (searched: {', '.join(map(str, _FOLDERS))})")


def list_queries() -> list[str]:
    """Names (without suffix) of every file in cypher/browser, views and graphmem's own statements."""
    return sorted(p.stem for p in query_folder().glob("*.cypher") if p.is_file())


@cache
def load_query(name: str) -> SavedQuery:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ConfigError(f"invalid saved query name: {name!r}")
    path = query_folder() / f"{name}.cypher"
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        known = ", ".join(VIEWS)
        raise ConfigError(f"no saved query {name!r} ({path}: {exc.strerror}); views: {known}") from exc
    lines = text.splitlines()
    purpose = _PURPOSE.match(lines[0]) if lines else None
    if purpose is None:
        raise ConfigError(f"{path}: the first line must be '// purpose: ...'")
    return SavedQuery(name=name, text=text, purpose=purpose.group(1), parameters=_binding_names(name, lines))


def _binding_names(name: str, lines: list[str]) -> tuple[str, ...]:
    """The parameters of a view's binding line (checked to be the only place naming parameters)."""
    code = [(i, line) for i, line in enumerate(lines) if line.strip() and not line.lstrip().startswith("//")]
    if name not in VIEWS:
        return ()
    first_index, first = code[0] if code else (0, "")
    match = _BINDING_LINE.match(first)
    if match is None:
        raise ConfigError(f"saved query {name!r}: its first statement line must bind its parameters (WITH $x AS x, ...)")
    if any("$" in line for i, line in code if i != first_index):
        raise ConfigError(f"saved query {name!r} uses a $parameter outside its binding line")
    return tuple(_BINDING.match(part).group(1) for part in match.group(1).split(", "))  # type: ignore[union-attr]  # the line matched _BINDING_LINE


def bound_statement(name: str, values: dict[str, Any]) -> str:
    """The view ``name`` as one runnable statement, its binding line turned into URL-safe literals.

    ``values`` must give every parameter of the view (None for absent scope ids). Strings are encoded
    with :func:`~graphmem.schema.literals.cypher_string` (``for_url=True``).
    """
    if name not in VIEWS:
        raise InvalidInputError(f"unknown view {name!r}; choose one of {', '.join(VIEWS)}")
    query = load_query(name)
    missing = [p for p in query.parameters if p not in values]
    if missing:
        raise InvalidInputError(f"view {name!r} needs {', '.join(missing)}")
    out, replaced = [], False
    for line in query.text.splitlines():
        if line.startswith("// parameters:"):
            continue  # they are bound below
        if not replaced and _BINDING_LINE.match(line):
            bindings = []
            for part in line[len("WITH "):].split(", "):
                param, variable = _BINDING.match(part).groups()  # type: ignore[union-attr]  # the line matched _BINDING_LINE
                bindings.append(f"{cypher_value(values[param], for_url=True)} AS {variable}")
            line, replaced = "WITH " + ", ".join(bindings), True
        out.append(line)
    return "\n".join(out)


__all__ = ["SCOPE_PARAMETERS", "VIEWS", "SavedQuery", "bound_statement", "list_queries", "load_query", "query_folder"]
