"""A user's own ontology: entity types (with typed attributes) and relation types for extraction.

    graph_store:
      ontology:
        mode: strict            # strict: only these types; guided: these first, others allowed
        entity_types:
          Person: {description: "a human being", attributes: {birthday: date}}
          Medication: {description: "a drug the patient takes", attributes: {dose: str}}
        relation_types:
          TAKES: {description: "a person takes a medication", source: [Person], target: [Medication]}

Names are checked when the config loads, so nothing the model says ever becomes a label, a
relationship type or a property name: entity type names become display labels (Browser colours),
relation type names are relationship types, attribute names become node properties ``attr_<name>``.
Attribute values from the model are validated one by one against their declared type; a value of
the wrong type is dropped (and counted), never stored.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from enum import Enum
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

from graphmem.types import iso, parse_time

#: Neo4j property prefix of attribute values; attribute names are validated, never the model's keys.
ATTRIBUTE_PREFIX = "attr_"
ENTITY_TYPE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,47}$")
RELATION_TYPE_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{0,63}$")
ATTRIBUTE_NAME = re.compile(r"^[a-z][a-z0-9_]{0,39}$")
#: Labels graphmem itself uses: an entity type with one of these names would mix with them.
RESERVED_LABELS = frozenset({"entity", "memory", "message", "conversation", "scopepartition"})


class AttributeType(str, Enum):
    STR = "str"
    INT = "int"
    FLOAT = "float"
    BOOL = "bool"
    DATE = "date"
    DATETIME = "datetime"


_JSON_TYPES: dict[AttributeType, dict[str, Any]] = {
    AttributeType.STR: {"type": "string"},
    AttributeType.INT: {"type": "integer"},
    AttributeType.FLOAT: {"type": "number"},
    AttributeType.BOOL: {"type": "boolean"},
    AttributeType.DATE: {"type": "string", "format": "date"},
    AttributeType.DATETIME: {"type": "string", "format": "date-time"},
}
_TYPES: dict[AttributeType, type] = {
    AttributeType.STR: str,
    AttributeType.INT: int,
    AttributeType.FLOAT: float,
    AttributeType.BOOL: bool,
    AttributeType.DATE: date,
    AttributeType.DATETIME: datetime,
}


@cache
def _adapter(kind: AttributeType) -> TypeAdapter[Any]:
    """A validator per attribute type, built on first use (six at import cost every process)."""
    return TypeAdapter(_TYPES[kind])
MAX_ATTRIBUTE_CHARS = 500


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class EntityType(_Model):
    description: str = ""
    attributes: dict[str, AttributeType] = Field(default_factory=dict)

    @field_validator("attributes")
    @classmethod
    def _names(cls, value: dict[str, AttributeType]) -> dict[str, AttributeType]:
        for name in value:
            if not ATTRIBUTE_NAME.match(name):
                raise ValueError(f"attribute name {name!r} must be lowercase snake_case (letters, digits, _; at most 40)")
        return value


class RelationType(_Model):
    description: str = ""
    source: list[str] = Field(default_factory=list)  # allowed source entity types; empty: any
    target: list[str] = Field(default_factory=list)  # allowed target entity types; empty: any


class Ontology(_Model):
    """The Python form of ``graph_store.ontology``."""

    mode: Literal["strict", "guided"] = "guided"
    entity_types: dict[str, EntityType] = Field(default_factory=dict)
    relation_types: dict[str, RelationType] = Field(default_factory=dict)

    @field_validator("entity_types")
    @classmethod
    def _entity_names(cls, value: dict[str, EntityType]) -> dict[str, EntityType]:
        seen: set[str] = set()
        for name in value:
            if not ENTITY_TYPE_NAME.match(name):
                raise ValueError(f"entity type {name!r} is not a usable name (a letter, then letters, digits or _)")
            if name.casefold() in RESERVED_LABELS:
                raise ValueError(f"entity type {name!r} is a label graphmem uses itself; choose another name")
            if name.casefold() in seen:
                raise ValueError(f"entity type {name!r} is declared twice (names are case-insensitive)")
            seen.add(name.casefold())
        return value

    @field_validator("relation_types")
    @classmethod
    def _relation_names(cls, value: dict[str, RelationType]) -> dict[str, RelationType]:
        seen: set[str] = set()
        for name in value:
            if not RELATION_TYPE_NAME.match(name):
                raise ValueError(f"relation type {name!r} cannot be a relationship type (a letter, then letters, digits or _)")
            if name.upper() in seen:
                raise ValueError(f"relation type {name!r} is declared twice (names are case-insensitive)")
            seen.add(name.upper())
        return value

    @model_validator(mode="after")
    def _endpoints(self) -> Ontology:
        known = {n.casefold() for n in self.entity_types}
        for name, rel in self.relation_types.items():
            for side, types in (("source", rel.source), ("target", rel.target)):
                for t in types:
                    if t.casefold() not in known:
                        raise ValueError(f"relation type {name!r}: {side} type {t!r} is not a declared entity type")
        if self.mode == "strict" and not self.entity_types:
            raise ValueError("a strict ontology needs at least one entity type")
        return self

    # --- lookups ----------------------------------------------------------------------------

    def entity_type(self, text: str) -> str | None:
        """The declared entity type name matching ``text`` (case-insensitive), or None."""
        folded = text.strip().casefold().replace(" ", "_")
        return next((n for n in self.entity_types if n.casefold() == folded), None)

    def relation_type(self, sanitised: str) -> str | None:
        """The declared relation type (upper snake) matching a sanitised relationship type, or None."""
        return sanitised if sanitised in self.relation_names else None

    @property
    def relation_names(self) -> list[str]:
        return [n.upper() for n in self.relation_types]

    def label(self, entity_type: str) -> str | None:
        """The display label of a stored entity type (its declared name), for Browser colours."""
        return self.entity_type(entity_type)

    def allows(self, relationship: str, source_type: str, target_type: str) -> bool:
        """Whether the declared relation type accepts these endpoint types (stored, lowercase)."""
        rel = next((r for n, r in self.relation_types.items() if n.upper() == relationship), None)
        if rel is None:
            return self.mode == "guided"
        ok_source = not rel.source or source_type in {t.casefold() for t in rel.source}
        ok_target = not rel.target or target_type in {t.casefold() for t in rel.target}
        return ok_source and ok_target

    # --- attributes -------------------------------------------------------------------------

    def attribute_schema(self) -> dict[str, Any] | None:
        """The JSON schema of the entity tool's ``attributes`` object (every declared attribute)."""
        props: dict[str, Any] = {}
        for type_name, et in self.entity_types.items():
            for attr, kind in et.attributes.items():
                entry = props.setdefault(attr, {**_JSON_TYPES[kind], "description": ""})
                entry["description"] = (entry["description"] + f" {type_name}.{attr} ({kind.value})").strip()
        if not props:
            return None
        return {"type": "object", "properties": props, "additionalProperties": False}

    def attributes(self, entity_type: str, raw: Any) -> tuple[dict[str, Any], int]:
        """The valid declared attributes of ``raw`` for the type, JSON-ready; and how many were dropped."""
        if not isinstance(raw, dict) or not raw:
            return {}, 0 if not raw else 1
        declared = self.entity_types.get(self.entity_type(entity_type) or "", EntityType()).attributes
        kept: dict[str, Any] = {}
        for key, value in raw.items():
            kind = declared.get(key) if isinstance(key, str) else None
            checked = _check(kind, value) if kind is not None else None
            if checked is not None:
                kept[key] = checked
        return kept, len(raw) - len(kept)


def _check(kind: AttributeType, value: Any) -> Any:
    """The value as stored (JSON-ready), or None when it is not of the declared type."""
    if value is None or (kind is not AttributeType.BOOL and isinstance(value, bool)):
        return None
    try:
        if kind is AttributeType.DATETIME:
            return iso(parse_time(value, field_name="attribute"))
        checked = _adapter(kind).validate_python(value, strict=kind in (AttributeType.STR, AttributeType.BOOL))
    except (ValidationError, ValueError):
        return None
    if isinstance(checked, date):
        return checked.isoformat()
    if isinstance(checked, str):
        checked = checked.strip()[:MAX_ATTRIBUTE_CHARS]
        return checked or None
    return checked


def stored_attributes(properties: dict[str, Any]) -> dict[str, Any]:
    """Attribute values from a node's properties (``attr_<name>``), without the prefix."""
    return {k[len(ATTRIBUTE_PREFIX) :]: v for k, v in properties.items() if k.startswith(ATTRIBUTE_PREFIX) and v is not None}


def property_names(attributes: dict[str, Any]) -> dict[str, Any]:
    """Attribute values keyed by their node property names; names must be validated attribute names."""
    out = {}
    for key, value in attributes.items():
        if not ATTRIBUTE_NAME.match(key):
            raise ValueError(f"not an attribute name: {key!r}")
        out[ATTRIBUTE_PREFIX + key] = value
    return out
