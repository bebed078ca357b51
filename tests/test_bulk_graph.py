"""The create-only bulk graph write (bulk_graph.py, write_created_graph.cypher) against the generic
path (write_graph.cypher, one statement per write) on a real Neo4j: the same nodes, labels,
properties, relations and mentions, and an exact fallback when a batch names a stored entity."""

from __future__ import annotations

import re
import uuid
from datetime import datetime, timedelta, timezone
from typing import Any

import pytest

from graphmem.stores.neo4j import Neo4jStore
from graphmem.stores.neo4j.bulk_graph import creates_only
from graphmem.stores.neo4j.values import VectorPlan
from graphmem.types import EntityWrite, GraphWrite, Invalidation, MemoryWrite, RelationWrite, Scope, canonical_name
from tests.conftest import TEST_DIMS

AT = datetime(2025, 3, 1, 12, 0, tzinfo=timezone.utc)
TYPES = ("person", "place", "food", "unknown-type")


def vec(i: int) -> list[float]:
    v = [0.0] * TEST_DIMS
    v[i % TEST_DIMS], v[(i * 7 + 1) % TEST_DIMS] = 1.0, 0.5
    return v


def writes(scope: Scope, names: list[str], chunk: int, tag: str = "", key: bool = False) -> list[GraphWrite]:
    """Writes of ``chunk`` entities: each with a hub (its first entity) related to the others, chained
    relations, memories mentioning two; the first write's hub also owns each later write's last one."""
    out = []
    ids = [f"{scope.key}/{tag}e{i}" for i in range(len(names))]
    for c, start in enumerate(range(0, len(names), chunk)):
        w = GraphWrite(add_id=f"add-{c}", scope=scope, at=AT + timedelta(minutes=c), idempotency_key=f"{scope.key}-{c}" if key else None)
        members = range(start, min(start + chunk, len(names)))
        own = [ids[i] for i in members]
        w.entities = [EntityWrite(ids[i], names[i], canonical_name(names[i]), TYPES[i % len(TYPES)], vec(i), True) for i in members]
        w.relations = [RelationWrite(own[0], "KNOWS", x, AT, None) for x in own[1:]]
        w.relations += [RelationWrite(a, "LIKES", b, AT - timedelta(days=1)) for a, b in zip(own[1:], own[2:], strict=False)]
        if c:  # from the first write's user node to this one's last entity: across writes of the batch
            w.relations.append(RelationWrite(ids[0], "OWNS", own[-1], AT))
        w.memories = [
            MemoryWrite("ADD", f"{scope.key}/{tag}m{c}-{j}", f"{names[start]} likes {names[start + j]}", vec(100 + j),
                        {"source": "load", "n": j}, "user", [own[0], own[j]], valid_at=AT - timedelta(days=j),
                        expires_at=AT + timedelta(days=400, microseconds=j))
            for j in range(1, len(own))
        ]  # fmt: skip
        out.append(w)
    return out


def dump(driver: Any, scope: Scope) -> dict[str, Any]:
    """The scope's graph with its own key, ids and partition names replaced by placeholders."""
    def norm(value: Any) -> Any:
        if isinstance(value, str):
            return re.sub(r"_[0-9a-f]{24}$", "_*", value.replace(scope.key, "S").replace(scope.user_id or "", "U"))
        if isinstance(value, list):
            return sorted(map(norm, value), key=repr) if value and isinstance(value[0], str) else [norm(v) for v in value]
        return value

    def props(p: dict[str, Any], drop: tuple[str, ...] = ()) -> dict[str, Any]:
        return {k: norm(v) for k, v in p.items() if k not in drop}

    nodes, _, _ = driver.execute_query(
        "MATCH (n) WHERE (n:Entity OR n:Memory OR n:ImportKey) AND n.scope = $s "
        "RETURN labels(n) AS labels, properties(n) AS p", {"s": scope.key})
    rels, _, _ = driver.execute_query(
        "MATCH (a)-[r]->(b) WHERE a.scope = $s RETURN type(r) AS t, a.id AS a, b.id AS b, properties(r) AS p", {"s": scope.key})
    return {
        "nodes": sorted((repr(sorted(map(norm, r["labels"]))), repr(sorted(props(r["p"]).items()))) for r in nodes),
        "relations": sorted((r["t"], norm(r["a"]), norm(r["b"]), repr(sorted(props(r["p"], ("id",)).items()))) for r in rels),
    }


@pytest.fixture
def store(neo4j_uri):
    with Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS, vector_plan=VectorPlan(partition_size=6)) as s:
        s.setup()
        yield s


def new_scope() -> Scope:
    return Scope.of(user_id=f"bulk-graph-{uuid.uuid4().hex[:10]}")


def test_which_batches_qualify():
    scope = new_scope()
    (w,) = writes(scope, ["ann", "bob", "cy"], 3)
    assert creates_only([w])
    again = writes(scope, ["ann", "dee"], 2)  # "ann" named twice in one batch
    assert not creates_only([w, *again])
    (known,) = writes(scope, ["eve", "fay"], 2)
    known.entities[1].is_new = False
    assert not creates_only([known])
    (outside,) = writes(scope, ["gus", "hal"], 2)
    outside.relations.append(RelationWrite(outside.entities[0].id, "KNOWS", "someone-stored", AT))
    assert not creates_only([outside])
    first, later = writes(scope, ["ma", "ned", "ola", "pat"], 2)
    assert creates_only([first, later])  # later's relation from first's hub: created earlier in the batch
    assert not creates_only([later])  # alone, that hub is a stored entity
    first.relations.append(RelationWrite(first.entities[0].id, "KNOWS", later.entities[0].id, AT))
    assert not creates_only([first, later])  # an entity of a later write does not exist yet
    (twice,) = writes(scope, ["ida", "jo"], 2)
    twice.relations.append(twice.relations[0])
    assert not creates_only([twice])
    (retiring,) = writes(scope, ["kay", "lu"], 2)
    retiring.invalidations.append(Invalidation("r1", AT))
    assert not creates_only([retiring])


@pytest.mark.neo4j
def test_a_created_batch_equals_the_generic_writes(store, raw_driver):
    names = [f"name {i}" for i in range(14)]
    generic, bulk = new_scope(), new_scope()
    for w in writes(generic, names, 5, key=True):
        store.write(w)  # write_graph.cypher, one statement per write
    batch = writes(bulk, names, 5, key=True)
    assert creates_only(batch)
    trips = store.round_trips
    store.write_many(batch)
    expected, got = dump(raw_driver, generic), dump(raw_driver, bulk)
    # 14 entities, 4 + 4 + 3 memories, 3 import keys; 11 KNOWS, 8 LIKES, 2 OWNS, 22 MENTIONS
    assert (len(got["nodes"]), len(got["relations"])) == (28, 43)
    assert got == expected
    # both scopes passed partition_size (6): partitioned after the write, as by the generic path
    assert any("Scope_*" in labels for labels, _ in got["nodes"])
    assert store.round_trips - trips > 1  # the batch statement, then the partitioning


@pytest.mark.neo4j
def test_a_batch_naming_a_stored_entity_falls_back_to_the_generic_path(store, raw_driver):
    generic, bulk = new_scope(), new_scope()
    for scope in (generic, bulk):
        store.write(writes(scope, ["stored one", "stored two"], 2, tag="s")[0])
    names = ["stored one", "fresh a", "fresh b"]
    for w in writes(generic, names, 3, tag="f"):
        store.write(w)
    batch = writes(bulk, names, 3, tag="f")
    assert creates_only(batch)  # it looks create-only: only the database knows "stored one"
    store.write_many(batch)
    got = dump(raw_driver, bulk)
    assert got == dump(raw_driver, generic)
    entities = [n for labels, n in got["nodes"] if "Entity" in labels]
    assert len(entities) == 4 and sum("'mentions', 2" in n for n in entities) == 1
