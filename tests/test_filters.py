"""mem0's filter language: checking (bad filters name their path), the Python oracle's semantics, and
the Cypher counterpart run on the real Neo4j against the oracle on a grid of records x filters."""

from __future__ import annotations

import itertools
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from conftest import TEST_DIMS

from graphmem.errors import InvalidInputError
from graphmem.schema.filters import matches, parse, scope_and_filter
from graphmem.stores.neo4j.filters import to_cypher
from graphmem.types import (
    EntityWrite,
    GraphWrite,
    MemoryWrite,
    RelationWrite,
    Scope,
    canonical_name,
    new_id,
)

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def vec(i: int) -> list[float]:
    v = [0.0] * TEST_DIMS
    v[i % TEST_DIMS] = 1.0
    return v


# --- checking ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "path"),
    [
        ({"k": {"like": "x"}}, "filters.k.like"),
        ({"OR": [{"a": 1}, {"b": {"gt": [1]}}]}, "filters.OR[1].b.gt"),
        ({"k": [1, 2]}, "filters.k"),
        ({"k": {"in": "abc"}}, "filters.k.in"),
        ({"k": {"contains": 5}}, "filters.k.contains"),
        ({"k": {"gt": True}}, "filters.k.gt"),
        ({"k": None}, "filters.k"),
        ({"created_at": {"gt": "yesterday"}}, "filters.created_at.gt"),
        ({"AND": {"a": 1}}, "filters.AND"),
        ({"NOT": [5]}, "filters.NOT[0]"),
        ({"bad\u200bkey": 1}, "filters.bad\u200bkey"),
        ({"k": {"eq": float("nan")}}, "filters.k.eq"),
    ],
)
def test_a_malformed_filter_names_its_path(bad, path):
    with pytest.raises(InvalidInputError) as err:
        parse(bad)
    assert path in str(err.value)


def test_depth_and_size_limits_and_mixed_kinds():
    deep: dict = {"k": 1}
    for _ in range(10):
        deep = {"AND": [deep]}
    with pytest.raises(InvalidInputError, match="deeper"):
        parse(deep)
    with pytest.raises(InvalidInputError, match="mix"):
        parse({"category": "food", "relationship": "LIVES_IN"})
    assert parse({"category": "food"}).applies_to == {"memory"}
    assert parse({"relationship": "LIVES_IN"}).applies_to == {"relation"}
    assert parse({"created_at": {"gte": "2024-01-01"}}).applies_to == {"memory", "relation"}
    assert parse(None) is None and parse({}) is None


def test_scope_ids_inside_filters_name_the_scope():
    scope, flt = scope_and_filter(None, None, None, {"user_id": "alice", "category": "food"})
    assert scope == Scope.of(user_id="alice") and flt is not None and flt.applies_to == {"memory"}
    scope, flt = scope_and_filter("alice", None, None, {"run_id": {"eq": "r1"}})
    assert scope == Scope.of(user_id="alice", run_id="r1") and flt is None
    with pytest.raises(InvalidInputError, match="differs"):
        scope_and_filter("alice", None, None, {"user_id": "bob"})
    with pytest.raises(InvalidInputError):
        scope_and_filter(None, None, None, {"category": "food"})  # still needs an id
    with pytest.raises(InvalidInputError, match="narrow"):
        scope_and_filter(None, "agent-1", None, {"user_id": "victim"})  # never into another partition
    assert scope_and_filter(None, "agent-1", None, {"run_id": "r"})[0] == Scope.of(agent_id="agent-1", run_id="r")


def test_values_and_keys_never_become_query_text():
    flt = parse({"x`]) DETACH DELETE m //": {"in": ["'; MATCH (n) DELETE n"]}, "OR": [{"memory": {"icontains": "$p"}}]})
    text, params = to_cypher(flt, "memory")
    assert "DELETE" not in text and "$p" not in text.replace("$f_", "")
    assert params["f_0"] == "meta.x`]) DETACH DELETE m //"


def test_oracle_semantics():
    def ok(spec, meta, record=None) -> bool:
        return matches(parse(spec), "memory", record or {}, meta)

    assert ok({"n": 2}, {"n": 2.0}) and not ok({"n": 1}, {"n": True}) and not ok({"n": "2"}, {"n": 2})
    assert ok({"n": {"ne": 1}}, {}) and not ok({"n": {"gt": 0}}, {}) and ok({"n": {"nin": [1]}}, {})
    assert ok({"s": {"icontains": "PIZ"}}, {"s": "Pizza"}) and not ok({"s": {"contains": "piz"}}, {"s": "Pizza"})
    assert ok({"s": "*"}, {"s": 0}) and not ok({"s": "*"}, {"s": [1]}) and not ok({"s": "*"}, {})
    assert ok({"NOT": [{"a": 1}, {"b": 1}]}, {"a": 2}) and not ok({"NOT": [{"a": 1}, {"b": 1}]}, {"b": 1})
    assert ok({"OR": [{"a": 1}, {"b": 1}]}, {"b": 1}) and not ok({"AND": [{"a": 1}, {"b": 1}]}, {"b": 1})
    assert ok({"created_at": {"lt": "2024-01-02"}}, {}, {"created_at": T0})


# --- the grid: the store's answer equals the oracle's, for every record x filter ------------------

VALUES = [None, 0, 1, 2.5, -3, "a", "Apple", "banana", True, False, [1, 2], {"x": 1}]
METADATA = [{"n": v, "s": w} for v, w in itertools.product(VALUES, VALUES[::-1])][::3]
GRID_FILTERS = [
    {"n": 1}, {"n": 2.5}, {"n": "a"}, {"n": True}, {"n": "*"}, {"s": "*"},
    {"n": {"ne": 1}}, {"n": {"gt": 0}}, {"n": {"gte": 1}}, {"n": {"lt": 1}}, {"n": {"lte": -3}},
    {"s": {"gt": "B"}}, {"s": {"lte": "a"}}, {"n": {"in": [1, "a", False]}}, {"s": {"nin": ["a", 0]}},
    {"s": {"contains": "an"}}, {"s": {"icontains": "AP"}}, {"n": {"eq": 0}, "s": {"ne": "a"}},
    {"OR": [{"n": 1}, {"s": "banana"}]}, {"NOT": [{"n": "*"}]}, {"NOT": [{"n": 0}, {"s": True}]},
    {"AND": [{"OR": [{"n": {"gte": 0}}, {"s": {"icontains": "a"}}]}, {"NOT": [{"n": 2.5}]}]},
    {"memory": {"icontains": "FACT 1"}}, {"role": "assistant"}, {"role": {"ne": "user"}},
    {"created_at": {"gte": (T0 + timedelta(minutes=20)).isoformat()}},
    {"updated_at": {"lt": (T0 + timedelta(minutes=5)).isoformat()}}, {"run_id": {"in": ["r1"]}},
    {"agent_id": "*"}, {"metadata.n": {"gt": 1}},
]  # fmt: skip


def _write_memories(store, scope: Scope) -> None:
    for i, meta in enumerate(METADATA):
        meta = {k: v for k, v in meta.items() if v is not None}
        role = "assistant" if i % 3 == 0 else "user"
        write = GraphWrite(new_id(), scope, T0 + timedelta(minutes=i), memories=[MemoryWrite("ADD", new_id(), f"fact {i}", vec(i), meta, role)])
        store.write(write)


def _memory_record(item) -> dict:
    return {
        "user_id": item.user_id, "agent_id": item.agent_id, "run_id": item.run_id, "created_at": item.created_at,
        "updated_at": item.updated_at, "valid_at": item.created_at, "memory": item.text, "role": item.role,
    }  # fmt: skip


def test_memory_filters_agree_with_the_oracle(store):
    scope = Scope.of(user_id=f"grid-{uuid.uuid4().hex[:8]}", run_id="r1")
    _write_memories(store, scope)
    everything = store.list_memories(scope)
    assert len(everything) == len(METADATA)
    nonempty = 0
    for spec in GRID_FILTERS:
        flt = parse(spec)
        expected = {m.id for m in everything if matches(flt, "memory", _memory_record(m), m.metadata)}
        got = {m.id for m in store.list_memories(scope, filters=flt)}
        assert got == expected, spec
        nonempty += 0 < len(expected) < len(everything)
    assert nonempty >= len(GRID_FILTERS) - 4  # the grid discriminates: most filters keep some, drop some


RELATIONS = [("alice", "person", "LIVES_IN", "Boston", "city"), ("alice", "person", "LIKES", "pizza", "food"),
             ("bob", "person", "LIVES_IN", "Denver", "city"), ("bob", "person", "KNOWS", "alice", "person"),
             ("Boston", "city", "PART_OF", "USA", "country")]  # fmt: skip
RELATION_FILTERS = [
    {"relationship": "LIVES_IN"}, {"relationship": {"in": ["LIKES", "KNOWS"]}}, {"source_entity": {"icontains": "AL"}},
    {"destination_type": "city"}, {"source_type": {"ne": "person"}}, {"NOT": [{"destination_entity": {"contains": "o"}}]},
    {"valid_at": {"gte": (T0 + timedelta(days=2)).isoformat()}}, {"OR": [{"source_entity": "bob"}, {"destination_entity": "USA"}]},
    {"user_id": {"ne": "nobody"}, "source_entity": {"ne": "bob"}}, {"created_at": {"lt": (T0 + timedelta(days=3)).isoformat()}},
]  # fmt: skip


def test_relation_filters_agree_with_the_oracle(store):
    scope = Scope.of(user_id=f"grid-{uuid.uuid4().hex[:8]}")
    names = {(n, t) for s, st, _, d, dt in RELATIONS for n, t in ((s, st), (d, dt))}
    ents = {n: EntityWrite(new_id(), n, canonical_name(n), t, vec(i), is_new=True) for i, (n, t) in enumerate(sorted(names))}
    for day, (s, _, r, d, _) in enumerate(RELATIONS):
        when = T0 + timedelta(days=day)
        rel = RelationWrite(ents[s].id, r, ents[d].id, when)
        store.write(GraphWrite(new_id(), scope, when, [ents[s], ents[d]], [rel]))
        ents = {k: EntityWrite(e.id, e.name, e.canonical, e.entity_type, e.embedding, is_new=False) for k, e in ents.items()}
    everything = store.get_all(scope)
    types = {n: t for n, t in names}
    assert len(everything) == len(RELATIONS)
    for spec in RELATION_FILTERS:
        flt = parse(spec)
        expected = {
            r.id for r in everything
            if matches(flt, "relation", {
                "user_id": scope.user_id, "created_at": r.created_at, "updated_at": r.created_at, "valid_at": r.valid_at,
                "invalid_at": r.invalid_at, "relationship": r.relationship, "source_entity": r.source, "destination_entity": r.destination,
                "source_type": types[r.source], "destination_type": types[r.destination]})
        }  # fmt: skip
        got = {r.id for r in store.get_all(scope, filters=flt)}
        assert got == expected, spec
        assert 0 < len(expected) < len(everything), spec
