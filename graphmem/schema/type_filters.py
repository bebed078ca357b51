"""Type-aware filters of search and get_all: ``entity_types=`` and ``relationship_types=``.

A relation passes ``entity_types`` when either endpoint has one of the types, and
``relationship_types`` when its type is one of them; both given: both must hold. Types are matched
the way they are stored: entity types case-insensitively, relationship types sanitised (upper snake).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from graphmem.errors import InvalidInputError
from graphmem.types import Relation, sanitize_relation_type


@dataclass(frozen=True)
class TypeFilter:
    entity_types: frozenset[str] | None = None
    relationship_types: frozenset[str] | None = None

    @classmethod
    def of(cls, entity_types: Any = None, relationship_types: Any = None) -> TypeFilter:
        entities = _names("entity_types", entity_types)
        relations = _names("relationship_types", relationship_types)
        return cls(
            None if entities is None else frozenset(t.strip().casefold().replace(" ", "_") for t in entities),
            None if relations is None else frozenset(sanitize_relation_type(t) for t in relations),
        )

    @property
    def active(self) -> bool:
        return self.entity_types is not None or self.relationship_types is not None

    def keeps(self, rel: Relation) -> bool:
        if self.relationship_types is not None and rel.relationship not in self.relationship_types:
            return False
        if self.entity_types is not None:
            ends = {(rel.source_type or "").casefold(), (rel.destination_type or "").casefold()}
            return bool(ends & self.entity_types)
        return True

    def apply(self, relations: list[Relation], limit: int | None) -> list[Relation]:
        kept = [r for r in relations if self.keeps(r)] if self.active else relations
        return kept[:limit] if limit is not None else kept


def _names(arg: str, value: Any) -> Sequence[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple, set, frozenset)) or not all(isinstance(v, str) and v.strip() for v in value):
        raise InvalidInputError(f"{arg} must be a list of non-empty strings")
    return list(value)
