"""Is the database's schema already what setup() would make? One read instead of 22 statements.

setup() used to run every schema statement (``CREATE ... IF NOT EXISTS``, two ``DROP ... IF
EXISTS``) and ``db.awaitIndexes`` on every start: 24 round trips, each a schema transaction, which a
short-lived process (a CLI command, a serverless function) paid every time. The indexes that
``show_indexes.cypher`` lists (one read of graphmem's own indexes, constraints' backing indexes included) tell whether
they would all be no-ops: every index and constraint the statements name exists with the expected
kind and is ONLINE, and the dropped ones are gone. Only then is creation skipped; anything else
(a fresh database, an index still populating, a missing or foreign one) runs the statements as before.

The expected names and kinds are read from the schema statements themselves (cypher/schema_*.cypher),
so a new schema file is checked without an edit here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from graphmem.schema.resources import load_cypher

_CREATE = re.compile(r"^\s*CREATE\s+(CONSTRAINT|VECTOR\s+INDEX|FULLTEXT\s+INDEX|RANGE\s+INDEX|INDEX)\s+(\w+)\s+IF\s+NOT\s+EXISTS",
                     re.IGNORECASE | re.MULTILINE)
_DROP = re.compile(r"^\s*DROP\s+INDEX\s+(\w+)\s+IF\s+EXISTS", re.IGNORECASE | re.MULTILINE)
#: the index kind SHOW INDEXES reports for what a CREATE statement makes (a uniqueness or key
#: constraint is backed by a RANGE index of the constraint's name)
_KIND = {"CONSTRAINT": "RANGE", "VECTOR INDEX": "VECTOR", "FULLTEXT INDEX": "FULLTEXT", "RANGE INDEX": "RANGE", "INDEX": "RANGE"}


@dataclass(frozen=True)
class Expected:
    """What the schema statements make (index name -> kind, whether a constraint owns it) and remove."""

    indexes: Mapping[str, tuple[str, bool]]
    dropped: frozenset[str]


@cache
def expected(statement_names: tuple[str, ...]) -> Expected:
    """Read the schema statements' files for the names they create and drop."""
    indexes: dict[str, tuple[str, bool]] = {}
    dropped: set[str] = set()
    for name in statement_names:
        text = load_cypher(name)
        for kind, index in _CREATE.findall(text):
            normal = " ".join(kind.upper().split())
            indexes[index] = (_KIND[normal], normal == "CONSTRAINT")
        dropped.update(_DROP.findall(text))
    return Expected(indexes, frozenset(dropped))


def is_current(rows: Iterable[Mapping[str, Any]], want: Expected) -> bool:
    """True when every wanted index exists, ONLINE, of the wanted kind (owned by a constraint when a
    constraint makes it) and no dropped one remains: running the schema statements would change nothing."""
    found = {row["name"]: row for row in rows}
    if want.dropped & found.keys():
        return False
    for name, (kind, constraint) in want.indexes.items():
        row = found.get(name)
        if row is None or row["type"] != kind or row["state"] != "ONLINE":
            return False
        if constraint != (row["owningConstraint"] is not None):
            return False
    return True


__all__ = ["Expected", "expected", "is_current"]
