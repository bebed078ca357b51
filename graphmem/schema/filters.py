"""mem0's filter language, parsed once and checked before anything runs.

    {"category": "food"}                                   equality (a metadata key)
    {"priority": {"gte": 2}}, {"tag": {"in": ["a", "b"]}}  operators: eq ne in nin gt gte lt lte
    {"memory": {"icontains": "pizza"}}                     contains, icontains (strings)
    {"source_app": "*"}                                    any value (the field is set)
    {"AND": [...]}, {"OR": [...]}, {"NOT": [...]}          NOT [a, b] matches when none of a, b does

Fields are built-in names (below) or metadata keys; ``metadata.<key>`` names a metadata key that
shares a built-in's name. A filter applies to the records that have the fields it names: one naming
only memory fields (metadata keys, ``memory``, ``role``) filters memories and leaves relations
alone, one naming only relation fields (``relationship``, ``source_entity``, ...) filters relations, one
naming shared fields (scope ids, times) filters both; a filter mixing memory-only and relation-only
fields is refused.

Semantics (the embedded store evaluates them here, the Neo4j store runs :func:`to_cypher`, and a
test checks both agree on a grid): comparisons need values of the same kind (numbers with numbers,
strings with strings, booleans only with eq/ne/in/nin, times with times); a missing field or a
value of another kind makes a comparison false; ``ne`` and ``nin`` are the negations of ``eq`` and
``in`` (so they match a record without the field). Metadata values that are not scalars (lists,
objects) are not filterable: they count as missing.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from graphmem.errors import InvalidInputError, LimitExceededError
from graphmem.schema import limits
from graphmem.types import parse_time

COMPARE = ("eq", "ne", "gt", "gte", "lt", "lte")
OPERATORS = (*COMPARE, "in", "nin", "contains", "icontains")
LOGIC = ("AND", "OR", "NOT")
MAX_DEPTH = limits.FILTER_DEPTH
MAX_CONDITIONS = limits.FILTER_CONDITIONS
MAX_LIST = limits.FILTER_LIST
MAX_KEY_CHARS = limits.METADATA_KEY_CHARS
SCOPE_FIELDS = ("user_id", "agent_id", "run_id")
TIME_FIELDS = ("created_at", "updated_at", "valid_at", "invalid_at")
#: field -> kinds of record that have it ("memory", "relation")
BUILTINS: dict[str, tuple[str, ...]] = {
    **{f: ("memory", "relation") for f in SCOPE_FIELDS},
    "created_at": ("memory", "relation"),
    "updated_at": ("memory", "relation"),
    "valid_at": ("memory", "relation"),
    "invalid_at": ("memory", "relation"),
    "memory": ("memory",),
    "role": ("memory",),
    "relationship": ("relation",),
    "source_entity": ("relation",),
    "destination_entity": ("relation",),
    "source_type": ("relation",),
    "destination_type": ("relation",),
}
META = "metadata."

Scalar = str | int | float | bool | datetime


@dataclass(frozen=True)
class Field:
    name: str  # the built-in name, or the metadata key
    meta: bool  # a metadata key

    @property
    def kinds(self) -> tuple[str, ...]:
        return ("memory",) if self.meta else BUILTINS[self.name]

    @property
    def is_time(self) -> bool:
        return not self.meta and self.name in TIME_FIELDS


@dataclass(frozen=True)
class Cond:
    """One condition: ``op`` is an operator, or "any" for "*"."""

    field: Field
    op: str
    value: Any = None


@dataclass(frozen=True)
class Logic:
    op: str  # AND / OR / NOT
    items: tuple[Node, ...]


Node = Cond | Logic


@dataclass(frozen=True)
class Filter:
    """A checked filter: the tree, and which kinds of record it applies to."""

    root: Node
    applies_to: frozenset[str]

    def applies(self, kind: str) -> bool:
        return kind in self.applies_to


# --- parsing -----------------------------------------------------------------------------------


def parse(filters: Any) -> Filter | None:
    """Check ``filters`` and build its tree; None for an empty filter. InvalidInputError names the
    path of the first problem (e.g. ``filters.OR[1].priority.gte``)."""
    if filters is None:
        return None
    if not isinstance(filters, Mapping):
        raise InvalidInputError(f"filters must be a dict, got {type(filters).__name__}")
    _bounded(filters)
    counter = [0]
    root = _node(filters, "filters", 1, counter)
    if isinstance(root, Logic) and not root.items:
        return None
    kinds = {k for c in conditions(root) for k in [frozenset(c.field.kinds)]}
    applies = frozenset({"memory", "relation"})
    for group in kinds:
        applies = applies & group
    if not applies:
        raise InvalidInputError("filters mix memory-only fields (metadata, memory, role) with relation-only fields")
    return Filter(root, applies)


def _bounded(filters: Mapping[Any, Any]) -> None:
    """A filter's size (FILTER_CHARS of compact JSON) and text (no lone surrogate: no store can compare
    one), checked before it is walked: the same refusal on every store and every read."""
    limits.json_shape("filters", filters, 2 * MAX_DEPTH + 3, limits.FILTER_CHARS,  # {OR: [{NOT: [...]}]}: 2 levels per logic
                      too_deep=f"filters nest deeper than {MAX_DEPTH} levels; the limit is {MAX_DEPTH}")
    try:
        text = json.dumps(filters, ensure_ascii=False, separators=(",", ":"), default=str)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"filters are not JSON: {exc}") from exc
    limits.too_long("filters as JSON", len(text), limits.FILTER_CHARS)
    limits.valid_unicode("filters", text)


def _node(value: Mapping[Any, Any], path: str, depth: int, counter: list[int]) -> Node:
    if depth > MAX_DEPTH:
        raise LimitExceededError(f"{path}: filters nest deeper than {MAX_DEPTH} levels; the limit is {MAX_DEPTH}")
    items: list[Node] = []
    for key, spec in value.items():
        if not isinstance(key, str):
            raise InvalidInputError(f"{path}: filter keys must be strings, got {key!r}")
        here = f"{path}.{key}"
        if key in LOGIC:
            items.append(_logic(key, spec, here, depth, counter))
        else:
            items.extend(_conditions(_field(key, here), spec, here, counter))
    return items[0] if len(items) == 1 else Logic("AND", tuple(items))


def _logic(op: str, spec: Any, path: str, depth: int, counter: list[int]) -> Logic:
    if not isinstance(spec, list) or not spec:
        raise InvalidInputError(f"{path}: {op} takes a non-empty list of filters")
    children = []
    for i, child in enumerate(spec):
        if not isinstance(child, Mapping) or not child:
            raise InvalidInputError(f"{path}[{i}]: each item of {op} must be a non-empty dict")
        children.append(_node(child, f"{path}[{i}]", depth + 1, counter))
    return Logic(op, tuple(children))


def _field(key: str, path: str) -> Field:
    if key in BUILTINS:
        return Field(key, meta=False)
    name = key[len(META) :] if key.startswith(META) else key
    check_metadata_key(name, path)
    return Field(name, meta=True)


def check_metadata_key(name: str, path: str) -> None:
    """A metadata key a filter can name: add() refuses the others with the same message, so nothing is
    stored that search(filters=...) could not reach."""
    if not name:
        raise InvalidInputError(f"{path}: a metadata key must have 1 to {MAX_KEY_CHARS} characters")
    if len(name) > MAX_KEY_CHARS:
        raise LimitExceededError(f"metadata key {name[:40]!r}... has {len(name):,} characters; the limit is {MAX_KEY_CHARS}")
    if any(unicodedata.category(ch)[0] in "CZ" and ch != " " for ch in name) or name != name.strip():
        raise InvalidInputError(f"{path}: metadata key {name!r} cannot be a property name (control, format or edge spaces)")


def _conditions(field: Field, spec: Any, path: str, counter: list[int]) -> list[Node]:
    if isinstance(spec, Mapping):
        if not spec:
            raise InvalidInputError(f"{path}: an empty operator dict")
        return [_cond(field, op, value, f"{path}.{op}", counter) for op, value in spec.items()]
    if spec == "*":
        return [_count(Cond(field, "any"), path, counter)]
    return [_cond(field, "eq", spec, path, counter)]


def _cond(field: Field, op: Any, value: Any, path: str, counter: list[int]) -> Cond:
    if op not in OPERATORS:
        raise InvalidInputError(f"{path}: unknown operator {op!r}; use one of {', '.join(OPERATORS)}")
    if op in ("in", "nin"):
        if not isinstance(value, list) or len(value) > MAX_LIST:
            raise (InvalidInputError if not isinstance(value, list) else LimitExceededError)(
                f"{path}: {op} takes a list of at most {MAX_LIST} values; the limit is {MAX_LIST}")
        checked = tuple(_value(field, op, v, f"{path}[{i}]") for i, v in enumerate(value))
        return _count(Cond(field, op, checked), path, counter)
    return _count(Cond(field, op, _value(field, op, value, path)), path, counter)


def _count(cond: Cond, path: str, counter: list[int]) -> Cond:
    counter[0] += 1
    if counter[0] > MAX_CONDITIONS:
        raise LimitExceededError(f"{path}: more than {MAX_CONDITIONS} conditions; the limit is {MAX_CONDITIONS}")
    return cond


def _value(field: Field, op: str, value: Any, path: str) -> Scalar:
    if isinstance(value, (list, tuple, dict, set)):
        raise InvalidInputError(f"{path}: a list or dict where a value is expected")
    if field.is_time:
        if op in ("contains", "icontains"):
            raise InvalidInputError(f"{path}: {op} does not apply to the time field {field.name}")
        when = parse_time(value, field_name=path) if isinstance(value, (str, datetime)) else None
        if when is None:
            raise InvalidInputError(f"{path}: {field.name} compares with an ISO-8601 time, got {value!r}")
        return when
    if op in ("contains", "icontains"):
        if not isinstance(value, str):
            raise InvalidInputError(f"{path}: {op} takes a string, got {type(value).__name__}")
        return value.lower() if op == "icontains" else value
    if isinstance(value, bool):
        if op not in ("eq", "ne", "in", "nin"):
            raise InvalidInputError(f"{path}: {op} does not compare booleans")
        return value
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise InvalidInputError(f"{path}: integer out of range")
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInputError(f"{path}: {value!r} is not a finite number")
        return value
    if isinstance(value, str):
        return value
    raise InvalidInputError(f"{path}: expected a string, number or boolean, got {type(value).__name__}")


def conditions(node: Node) -> list[Cond]:
    if isinstance(node, Cond):
        return [node]
    return [c for child in node.items for c in conditions(child)]


# --- the oracle: evaluation in Python ------------------------------------------------------------


def _kind(value: Any) -> str | None:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "number" if -(2**63) <= value < 2**63 else None  # what a Neo4j property can hold
    if isinstance(value, float):
        return "number" if math.isfinite(value) else None
    if isinstance(value, str):
        return "str"
    if isinstance(value, datetime):
        return "time"
    return None  # missing, or not filterable


def _compare(op: str, have: Any, want: Any) -> bool:
    if _kind(have) is None or _kind(have) != _kind(want):
        return False
    if op == "eq":
        return bool(have == want)
    if _kind(have) == "bool":
        return False
    ordered: dict[str, bool] = {"gt": have > want, "gte": have >= want, "lt": have < want, "lte": have <= want}
    return ordered[op]


def _holds(cond: Cond, have: Any) -> bool:
    op, want = cond.op, cond.value
    if op == "any":
        return _kind(have) is not None
    if op == "ne":
        return not _compare("eq", have, want)
    if op == "in":
        return any(_compare("eq", have, w) for w in want)
    if op == "nin":
        return not any(_compare("eq", have, w) for w in want)
    if op == "contains":
        return isinstance(have, str) and want in have
    if op == "icontains":
        return isinstance(have, str) and want in have.lower()
    return _compare(op, have, want)


def evaluate(node: Node, lookup: Callable[[Field], Any]) -> bool:
    """Whether a record matches; ``lookup`` gives a field's value (None when missing)."""
    if isinstance(node, Cond):
        return _holds(node, lookup(node.field))
    results = (evaluate(child, lookup) for child in node.items)
    if node.op == "AND":
        return all(results)
    if node.op == "OR":
        return any(results)
    return not any(results)


def matches(flt: Filter | None, kind: str, record: Mapping[str, Any], metadata: Mapping[str, Any] | None = None) -> bool:
    """``record``: built-in field -> value; ``metadata``: the memory's metadata."""
    if flt is None or not flt.applies(kind):
        return True
    meta = metadata or {}
    return evaluate(flt.root, lambda f: meta.get(f.name) if f.meta else record.get(f.name))


# --- scope ids inside filters (mem0 puts them there) -----------------------------------------------


def scope_and_filter(user_id: Any, agent_id: Any, run_id: Any, filters: Any) -> tuple[Any, Filter | None]:
    """The read's Scope and its checked filter. A top-level ``user_id`` / ``agent_id`` / ``run_id``
    given as a plain string (or ``{"eq": id}``) in ``filters`` names the scope like the keyword
    argument does; the same id given both ways must agree, and when keyword ids are given, filter ids
    may only narrow that scope, never move it to another partition (an agent-bound caller cannot
    reach a user's data through ``filters``). Anywhere else, a scope id is a field like any other,
    compared inside the scope the read already names."""
    from graphmem.types import Scope

    ids = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    if filters is not None and not isinstance(filters, Mapping):
        raise InvalidInputError(f"filters must be a dict, got {type(filters).__name__}")
    rest = dict(filters or {})
    for key in SCOPE_FIELDS:
        spec = rest.get(key)
        if isinstance(spec, Mapping) and list(spec) == ["eq"]:
            spec = spec["eq"]
        if not isinstance(spec, str) or spec == "*":
            continue
        if ids[key] is not None and ids[key] != spec:
            raise InvalidInputError(f"filters.{key} ({spec!r}) differs from {key} ({ids[key]!r}); a metadata key "
                                    f"named {key} is filtered as metadata.{key}")
        ids[key] = spec
        del rest[key]
    scope = Scope.of(**ids)
    explicit = {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
    if any(v is not None for v in explicit.values()) and scope.key != Scope.of(**explicit).key:
        raise InvalidInputError("scope ids in filters may narrow the scope the arguments name, not move it to another user or agent")
    return scope, parse(rest)


def scoped(scope: Any, flt: Filter | None, kind: str) -> Filter | None:
    """The filter a store applies to records of ``kind`` in ``scope``'s partition: the ids the scope
    names beyond its owner (``Scope.narrowing``, matched exactly) AND the caller's filter."""
    conds: list[Node] = [Cond(Field(k, meta=False), "eq", v) for k, v in scope.narrowing.items()]
    if flt is not None and flt.applies(kind):
        conds.append(flt.root)
    if not conds:
        return None
    return Filter(conds[0] if len(conds) == 1 else Logic("AND", tuple(conds)), frozenset({kind}))


def equalities(flt: Filter | None) -> list[tuple[str, Any]] | None:
    """The filter as metadata equalities (key, value), for the neighbouring-message context of
    search, which compares memories by metadata equality only; None when the filter says more than
    that (the context then shows no neighbours rather than ones the filter would refuse)."""
    if flt is None or not flt.applies("memory"):
        return []
    items = flt.root.items if isinstance(flt.root, Logic) and flt.root.op == "AND" else (flt.root,)
    out = []
    for item in items:
        if not (isinstance(item, Cond) and item.op == "eq" and item.field.meta):
            return None
        out.append((item.field.name, item.value))
    return out
