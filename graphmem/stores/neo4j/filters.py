"""The Cypher counterpart of graphmem.schema.filters: a checked filter tree becomes one boolean expression.

Only fixed fragments and parameter names ever become query text; every value and every metadata key
travels as a parameter (``m[$f0]`` reads the property named by the parameter). Each condition is
two-valued like the Python oracle: ``coalesce(..., false)`` turns Cypher's null into false, and a
CASE guards string functions against values of other types.
"""

from __future__ import annotations

from typing import Any

from graphmem.schema.filters import Cond, Field, Filter, Node
from graphmem.schema.resources import load_cypher
from graphmem.stores.neo4j.values import Statement, utc

#: a memory's top-level scalar metadata value ``k`` is also stored as the property ``meta.k``
META_PREFIX = "meta."

#: the placeholder a cypher/ file carries where a filter goes (a true literal when there is none)
PLACEHOLDER = {"memory": "true /* memory filter */", "relation": "true /* relation filter */"}

_MEMORY = {
    "user_id": "m.user_id", "agent_id": "m.agent_id", "run_id": "m.run_id", "created_at": "m.created_at",
    "updated_at": "m.updated_at", "valid_at": "coalesce(m.valid_at, m.created_at)", "invalid_at": "m.invalid_at",
    "memory": "m.text", "role": "m.role",
}  # fmt: skip
_RELATION = {
    "user_id": "r.user_id", "agent_id": "r.agent_id", "run_id": "r.run_id", "created_at": "r.created_at",
    "updated_at": "r.updated_at", "valid_at": "r.valid_at", "invalid_at": "r.invalid_at",
    "relationship": "type(r)", "source_entity": "s.name", "destination_entity": "d.name",
    "source_type": "s.entity_type", "destination_type": "d.entity_type",
}  # fmt: skip
_COMPARE = {"eq": "=", "gt": ">", "gte": ">=", "lt": "<", "lte": "<="}


class _Compiler:
    def __init__(self, kind: str, prefix: str) -> None:
        self.kind = kind
        self.prefix = prefix
        self.params: dict[str, Any] = {}

    def param(self, value: Any) -> str:
        name = f"{self.prefix}{len(self.params)}"
        self.params[name] = value
        return "$" + name

    def field(self, field: Field) -> str:
        if field.meta:
            return f"m[{self.param(META_PREFIX + field.name)}]"
        return (_MEMORY if self.kind == "memory" else _RELATION)[field.name]

    def node(self, node: Node) -> str:
        if isinstance(node, Cond):
            return self.cond(node)
        parts = [self.node(child) for child in node.items]
        if node.op == "AND":
            return "(" + " AND ".join(parts) + ")"
        if node.op == "OR":
            return "(" + " OR ".join(parts) + ")"
        return "(NOT (" + " OR ".join(parts) + "))"

    def cond(self, cond: Cond) -> str:
        x, op = self.field(cond.field), cond.op
        if op == "any":
            return f"({x} IS NOT NULL)"
        value = _value(cond.value)
        if op in ("eq", "ne", "gt", "gte", "lt", "lte"):
            test = f"coalesce({x} {_COMPARE['eq' if op == 'ne' else op]} {self.param(value)}, false)"
            return f"(NOT {test})" if op == "ne" else test
        if op in ("in", "nin"):
            test = f"coalesce({x} IN {self.param(value)}, false)"
            return f"(NOT {test})" if op == "nin" else test
        lowered = "toLower(value)" if op == "icontains" else "value"
        return f"(CASE WHEN {x} IS :: STRING NOT NULL THEN {lowered.replace('value', x)} CONTAINS {self.param(value)} ELSE false END)"


def _value(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_value(v) for v in value]
    return utc(value) if hasattr(value, "tzinfo") else value


def to_cypher(flt: Filter | None, kind: str, prefix: str = "f") -> tuple[str, dict[str, Any]]:
    """The boolean expression for records of ``kind`` ("memory": variable m; "relation": r, s, d)
    and its parameters; "true" when the filter does not apply to that kind."""
    if flt is None or not flt.applies(kind):
        return "true", {}
    compiler = _Compiler(kind, prefix + "_")
    return compiler.node(flt.root), compiler.params


def filtered(
    name: str, params: dict[str, Any], flt: Filter | None, kind: str, also: tuple[tuple[Filter | None, str], ...] = ()
) -> Statement:
    """The statement of cypher/<name> with its filter placeholders (``kind``, and those in ``also``)
    replaced by the compiled filters, and the filters' parameters added (fm_* for memories, fr_* for
    relations)."""
    text = load_cypher(name)
    values = dict(params)
    for f, k in ((flt, kind), *also):
        placeholder = PLACEHOLDER[k]
        if placeholder not in text:
            raise AssertionError(f"cypher/{name} has no {k} filter placeholder")
        expression, found = to_cypher(f, k, prefix="fm" if k == "memory" else "fr")
        text = text.replace(placeholder, expression)
        values.update(found)
    return Statement(name, values, text_override=text, pack=True)


__all__ = ["META_PREFIX", "PLACEHOLDER", "filtered", "to_cypher"]
