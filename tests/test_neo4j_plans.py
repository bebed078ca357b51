"""Plans kept off the user's path (graphmem/stores/neo4j/plans.py): statements go with ``CYPHER
replan=skip`` keyed to a plan generation that follows the database's size, and a new generation's
statements are planned before adds and searches use them. Against the real Neo4j."""

from __future__ import annotations

import uuid

import pytest
from conftest import TEST_DIMS

from graphmem.stores.base import GraphQuery, MemoryQuery
from graphmem.stores.neo4j import Neo4jStore, plans
from graphmem.types import EntityWrite, GraphWrite, MemoryWrite, RelationWrite, Scope, canonical_name, new_id, utcnow


def test_generations_follow_the_size_by_factors_of_four():
    assert [plans.generation_of(n) for n in (0, 999, 1000, 3999, 4000, 16000, 64000)] == [0, 0, 1, 1, 2, 3, 4]
    assert plans.generation_of(8, floor=2) == 2


def test_a_sent_statement_keeps_its_plan_and_names_its_generation():
    text = plans.tagged("MATCH (n) RETURN n", 3)
    assert text.startswith("CYPHER replan=skip\n") and text.endswith("// plan generation 3")


class Recording(Neo4jStore):
    """The real store, noting each statement it sends with the generation adds were using then."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.sent: list[tuple[str, str, int]] = []

    def _args(self, stmt):
        text, params = super()._args(stmt)
        self.sent.append((stmt.name, text, self.plans.current))
        return text, params


def one_add(scope: Scope) -> GraphWrite:
    v = [1.0] + [0.0] * (TEST_DIMS - 1)
    me = EntityWrite(new_id(), "Ada", canonical_name("Ada"), "person", v, True)
    tea = EntityWrite(new_id(), "tea", "tea", "drink", v, True)
    write = GraphWrite(add_id=new_id(), scope=scope, at=utcnow(), entities=[me, tea],
                       relations=[RelationWrite(me.id, "LIKES", tea.id, valid_at=utcnow())])
    write.memories = [MemoryWrite("ADD", new_id(), "Likes tea", v, {}, "user", [tea.id])]
    return write


@pytest.mark.neo4j
def test_a_grown_database_gets_new_plans_before_searches_use_them(neo4j_uri):
    scope = Scope.of(user_id=f"plans-{uuid.uuid4().hex[:8]}")
    with Recording(url=neo4j_uri, embedding_dims=TEST_DIMS) as store:
        store.setup()
        assert store.plans.current == plans.generation_of(store._node_count())
        try:
            with store.scope_lock(scope):
                store.write(one_add(scope))
            before = store.plans.current
            store.plans.floor = 1  # as if the database had grown 4x since its plans were made
            store.sent.clear()
            after = store.plans.refresh()
            assert after > before
            planned = {name for name, text, current in store.sent if text.endswith(f"// plan generation {after}")}
            # the add's and the search's statements of the new generation were sent while adds still used the old one
            assert {"scope_lock", "conversation", "resolve", "write_graph", "search_memories", "search_graph"} <= planned
            assert all(current == before for _, _, current in store.sent)
            store.sent.clear()
            v = [1.0] + [0.0] * (TEST_DIMS - 1)
            found = store.search_memories(scope, MemoryQuery(v, "tea"))
            relations = store.search_graph(scope, GraphQuery(v, "tea", ["tea"]))
            assert [m.text for m in found] == ["Likes tea"] and [r.relationship for r in relations] == ["LIKES"]
            sent = [text for _, text, _ in store.sent]
            assert sent and all(t.startswith(plans.SKIP) and t.endswith(f"// plan generation {after}") for t in sent)
        finally:
            store.delete_all(scope)


@pytest.mark.neo4j
def test_writes_check_the_size_in_the_background_at_most_every_interval(neo4j_uri):
    scope = Scope.of(user_id=f"plans-{uuid.uuid4().hex[:8]}")
    with Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS, warm_plans=False) as store:
        store.setup()
        counted = []
        store.plans.count_nodes = lambda: counted.append(1) or store._node_count()
        store.plans.check_every = 0.0
        try:
            with store.scope_lock(scope):
                store.write(one_add(scope))
            store.plans.wait(30)
            assert counted == [1]
            store.plans.check_every = 3600.0
            store.write_many([one_add(Scope.of(user_id=scope.user_id, run_id="r"))])
            store.plans.wait(30)
            assert counted == [1]  # not again within the interval
        finally:
            store.delete_all(scope)
    store.plans.after_write()  # a closed store starts no check
    assert counted == [1]

