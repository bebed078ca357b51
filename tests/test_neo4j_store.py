"""Neo4j-specific tests: the query files themselves, and the store against a real Neo4j 5.26.

The shared contract suite covers behaviour common to every store; this file covers what only the
Neo4j store has: Cypher files and their parameters, schema, round trips, routing, injection
attempts against a real server, error translation, and both vector-search plans.
"""

from __future__ import annotations

import logging
import math
import random
import re
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest
from conftest import TEST_DIMS
from neo4j import GraphDatabase, RoutingControl

from graphmem.errors import ConfigError, InvalidInputError, StoreError, StoreUnavailableError
from graphmem.schema.filters import parse
from graphmem.schema.resources import list_cypher, load_cypher, load_prompt
from graphmem.stores.base import AddContextQuery, EntityCandidate, GraphQuery, MemoryQuery, RelationFact, relation_visible
from graphmem.stores.memory_context import ContextQuery
from graphmem.stores.neo4j import (
    Neo4jStore,
    bulk_graph,
    cached_search,
    embedder_record,
    partition,
    queries,
    schema_check,
    single_pass,
)
from graphmem.stores.neo4j import bulk as bulk_queries
from graphmem.stores.neo4j import conversation as log_queries
from graphmem.stores.neo4j import memories as memory_queries
from graphmem.stores.neo4j.queries import VectorPlan
from graphmem.stores.neo4j.store import redact_url
from graphmem.types import (
    Conversation,
    EntityWrite,
    GraphWrite,
    Invalidation,
    LoggedMessage,
    MemoryWrite,
    RelationWrite,
    Scope,
    canonical_name,
    new_id,
    sanitize_relation_type,
)

T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
PACKAGE = Path(__file__).resolve().parent.parent / "graphmem" / "stores" / "neo4j"
PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


# --- helpers ----------------------------------------------------------------------------------------


def unit(*weights: float) -> list[float]:
    """A TEST_DIMS unit vector with the given leading components."""
    vec = [0.0] * TEST_DIMS
    vec[: len(weights)] = weights
    norm = math.sqrt(sum(w * w for w in weights))
    return [v / norm for v in vec]


def axis(i: int) -> list[float]:
    vec = [0.0] * TEST_DIMS
    vec[i % TEST_DIMS] = 1.0
    return vec


def ent(name: str, embedding: list[float], is_new: bool = True, entity_id: str | None = None) -> EntityWrite:
    return EntityWrite(entity_id or new_id(), name, canonical_name(name), "thing", embedding, is_new)


def add(store: Neo4jStore, scope: Scope, entities=(), relations=(), invalidations=(), at: datetime = T0, add_id=None):
    write = GraphWrite(add_id or new_id(), scope, at, list(entities), list(relations), list(invalidations))
    store.write(write)
    return write


def rel(source: EntityWrite, relationship: str, destination: EntityWrite, valid_at: datetime = T0, invalid_at=None):
    return RelationWrite(source.id, relationship, destination.id, valid_at, invalid_at)


def declared_params(text: str) -> set[str]:
    header = "\n".join(line for line in text.splitlines() if line.startswith("//"))
    match = re.search(r"Parameters:(.*?)(?=\n//\s*\n|\Z)", header, re.S)
    assert match, "header has no 'Parameters:' line"
    return set(PARAM.findall(match.group(1)))


def used_params(text: str) -> set[str]:
    body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    return set(PARAM.findall(body))


# --- query files (no server needed) -----------------------------------------------------------------


def test_every_cypher_file_loads_and_has_no_formatting_placeholders():
    names = list_cypher()
    assert len(names) >= 15
    for name in names:
        text = load_cypher(name)
        body = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
        assert body.strip(), name
        assert not re.search(r"%[sdr(]|\{\}|\{\d+\}|\{[A-Za-z_]\w*(![rsa])?\}", body), name
        assert ";" not in body, f"{name}: one statement per file"


def test_every_cypher_file_declares_exactly_the_parameters_it_uses():
    for name in list_cypher():
        text = load_cypher(name)
        assert declared_params(text) == used_params(text), name


def sample_statements():
    scope = Scope.of(user_id="u")
    e = ent("Alice", axis(0))
    write = GraphWrite("add", scope, T0, [e], [rel(e, "KNOWS", e)], [Invalidation("r", T0)])
    query = GraphQuery(embedding=axis(0), text="alice", seed_canonicals=["alice"], as_of=T0)
    plan = VectorPlan()
    return [
        *queries.schema(TEST_DIMS),
        queries.show_indexes(),
        queries.await_indexes(10),
        queries.resolve(scope, [EntityCandidate("alice", axis(0), mention=True)], 0.7, [axis(1)], 5, ["e"], 20, plan),
        queries.relations_around(scope, ["x"]),
        queries.write_graph(write),
        bulk_queries.write_verbatim([GraphWrite("add", scope, T0)]),
        bulk_queries.imported_keys(["k"]),
        bulk_queries.idempotent_outcome("k"),
        embedder_record.read(),
        embedder_record.write("int8"),
        bulk_graph.write_created([GraphWrite("add", scope, T0, [e])]),
        queries.search_graph(scope, query, plan, 100),
        cached_search.seeds_statement(scope, query, plan, "v", "w"),
        cached_search.rows_statement(scope, [{"i": 0, "eid": "4:x:0", "id": "r"}]),
        single_pass.context_statement(scope, AddContextQuery("alice", axis(0), "alice"), plan),
        queries.get_all(scope, False, None),
        queries.timeline(scope, "alice"),
        queries.set_relation_facts(scope, [RelationFact("r", "e", "Alice knows Alice", axis(0))]),
        queries.scopes(),
        queries.entities(scope),
        queries.scope_lock(scope),
        memory_queries.search_memories(scope, MemoryQuery(axis(0), "tea", filters=parse({"k": 1}), as_of=T0), plan),
        memory_queries.memory_context(scope, ContextQuery(axis(0), ["m"], time_from=T0, time_to=T0, filters=parse({"k": 1}), as_of=T0)),
        memory_queries.get_memory("m"),
        memory_queries.list_memories(scope, False, None),
        memory_queries.delete_memory("m"),
        log_queries.conversation(scope, 10),
        log_queries.set_summary(scope, "summary", 3, T0),
        queries.delete_all(scope),
        queries.delete_all(Scope.of(user_id="u", run_id="r")),
        queries.reset(),
        queries.ping(),
        queries.node_count(),
        queries.summaries_keep_newest(),
        *partition.create_indexes(scope, TEST_DIMS),
        partition.label_scope(scope, record=True),
        *partition.await_indexes(scope, 10),
        *lifecycle_statements(scope),
    ]


def lifecycle_statements(scope: Scope) -> list:
    """Ontology attributes, retention and erasure."""
    e = ent("Alice", axis(0))
    e.attributes = {"birthday": "1990-01-01"}
    write = GraphWrite("add", scope, T0, [e])
    from graphmem.stores.neo4j import lifecycle

    return [
        queries.set_entity_attributes(write),
        lifecycle.purge_expired(T0, 100),
        lifecycle.forget_scope(scope),
        lifecycle.forget_entity(scope, "alice", "(?isuU).*alice.*"),
    ]


def test_statements_pass_exactly_the_parameters_their_files_use():
    statements = sample_statements()
    for stmt in statements:
        assert set(stmt.params) == used_params(stmt.text), stmt.name
    assert {s.name for s in statements} == set(list_cypher()), "every file is used, every statement has a file"


def test_statements_with_filters_compiled_in_are_sent_as_one_map_parameter():
    """Neo4j keys its plan cache on parameter types with size buckets for lists and strings: sent
    unpacked, resolve was planned again whenever an add named another number of entities."""
    scope = Scope.of(user_id="u", run_id="r")
    texts = set()
    for names in (["a"], ["a", "b", "c"], ["a"] * 9):
        stmt = queries.resolve(scope, [EntityCandidate(n, axis(0)) for n in names], 0.7, [axis(1)] * len(names), 5, [], 20, VectorPlan())
        text, params = stmt.run_args()
        assert list(params) == ["p"] and set(params["p"]) == used_params(stmt.text)
        assert "$p.candidates" in text and "$candidates" not in text
        texts.add(text)
    assert len(texts) == 1


def test_setup_plans_the_add_and_search_statements_without_writing(neo4j_uri):
    from graphmem.stores.neo4j import warm

    warm.WARMED.discard((neo4j_uri, None))
    store = Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS)
    try:
        store.setup()
        assert store._warmer is None  # setup makes the schema only; warm() starts the planning
        store.warm()
        assert store.wait_warm(300)
        assert store._warmer is not None and store._warmer.failed == []  # every statement planned
        assert store.round_trips >= len(warm.statements(TEST_DIMS, VectorPlan(), 10))
        assert store.entities(warm.WARM_SCOPE) == [] and store.list_memories(warm.WARM_SCOPE, include_deleted=True) == []
        assert store.conversation(warm.WARM_SCOPE, 10).last_seq == 0  # the writes were rolled back
        # the rehearsal's own scope (a fresh random id) was written, searched and deleted whole
        left, _, _ = store._driver.execute_query("MATCH (n) WHERE n.scope STARTS WITH $p RETURN count(n) AS n",
                                                 p='["graphmem-warming-')  # a scope key's start (Scope.key)
        assert left[0]["n"] == 0
        again = Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS)
        again.setup()
        again.warm()  # one warming per process and server
        assert again._warmer is None and again.wait_warm(0)
        again.close()
    finally:
        store.close()


def _warmed_shapes(store: Neo4jStore) -> set[tuple[str, bool]]:
    """(text, whether its transaction had run a statement before it) of every statement warmed."""
    from graphmem.stores.neo4j import warm

    shapes = set()
    for group, read in warm.statements(TEST_DIMS, store.vector_plan, store.search_relation_limit):
        for i, stmt in enumerate(group):
            shapes.add((stmt.run_args()[0], not read and i > 0))
    return shapes


@pytest.mark.neo4j
def test_warming_plans_each_statement_in_the_transaction_shape_an_add_runs_it_in(store, scope, monkeypatch):
    """Neo4j keys a plan on whether its transaction has written: resolve, the single-pass context and
    the write run after the scope lock's write, so warming them in a fresh transaction left the first
    add to plan them again (seconds each after a restart). Every statement a locked add and an
    unlocked write run must have been warmed in the same shape."""
    ran: list[tuple[str, bool]] = []
    seen: dict[int, int] = {}
    real_run = store._run

    def recording(tx, stmt):
        ran.append((stmt.run_args()[0], seen.get(id(tx), 0) > 0))
        seen[id(tx)] = seen.get(id(tx), 0) + 1
        return real_run(tx, stmt)

    monkeypatch.setattr(store, "_run", recording)
    a, b = ent("Alice", axis(0)), ent("Bob", axis(1))
    with store.locked_conversation(scope, 10):
        store.resolve(scope, [EntityCandidate("alice", axis(0)), EntityCandidate("bob", axis(1))], 0.7, [axis(2)], 5, 20)
        store.add_context(scope, AddContextQuery("alice and bob", axis(0), "alice and bob"))
        a.attributes = {"colour": "red"}
        store.write(GraphWrite("a1", scope, T0, [a, b], [RelationWrite(a.id, "KNOWS", b.id, T0)],
                               messages=[LoggedMessage("user", "hi", T0)]))
    store.write(GraphWrite("a2", scope, T0, [ent("Carol", axis(3))]))  # an unlocked write (add_many)
    assert len(ran) >= 7 and any(after for _, after in ran)
    missing = [text.split("\n")[0] for text, after in ran if (text, after) not in _warmed_shapes(store)]
    assert missing == []
    store.delete_all(scope)


def test_partition_ddl_holds_only_checked_names():
    scope = Scope.of(user_id='x`]->() DETACH DELETE n //', agent_id="🙂")
    n = partition.names(scope)
    assert re.fullmatch(r"Scope_[0-9a-f]{24}", n["label"]) and re.fullmatch(r"entity_embedding_[0-9a-f]{24}", n["index"])
    assert re.fullmatch(r"ScopeMemory_[0-9a-f]{24}", n["memory_label"])
    for stmt in partition.create_indexes(scope, TEST_DIMS):
        text = stmt.text.split("CREATE", 1)[1]
        assert "__" not in text and "DETACH" not in text


def test_python_modules_hold_no_cypher():
    for path in PACKAGE.glob("*.py"):
        source = path.read_text(encoding="utf-8")
        for keyword in ("MATCH (", "MERGE (", "CREATE (", "DETACH DELETE", "RETURN ", "CALL db."):
            assert keyword not in source, f"{path.name} contains {keyword!r}"


def test_resources_name_what_is_missing():
    with pytest.raises(ConfigError, match="no_such_statement"):
        load_cypher("no_such_statement")
    with pytest.raises(ConfigError, match="no_such_prompt"):
        load_prompt("no_such_prompt")
    with pytest.raises(ConfigError):
        load_cypher("../pyproject")
    assert load_cypher("resolve") == load_cypher("resolve.cypher")


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Alice AND Bob", "alice and bob"),
        ('name:"x" OR (y)*', 'name\\:\\"x\\" or \\(y\\)\\*'),
        ("a && b || !c ~2 ^3 [r TO s] {t} /u\\", "a b \\!c \\~2 \\^3 \\[r to s\\] \\{t\\} \\/u\\\\"),
        ("  !!! ??? ***  ", None),
        ("", None),
    ],
)
def test_fulltext_terms_escape_lucene_syntax(text, expected):
    assert queries.fulltext_terms(text) == expected  # words without a letter or digit are dropped


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Alice AND Bob", "alice bob"),  # function words are left out of a name search
        ('name:"x" OR (y)*', 'name\\:\\"x\\" \\(y\\)\\*'),
        ("what do I do at the club on Saturdays?", "club saturdays\\?"),  # "the" matched "the book fair"
        ("the of and", None),
        ("Where does Jordan's sister live?", "jordan's jordan sister live\\?"),
        ("O’Brien’s dog", "o’brien’s o’brien dog"),
        ("'s", "'s"),  # nothing left bare: kept as it was
        ("what's it's", "what's"),  # contractions, not names: no bare words; "it's" is a function word
    ],
)
def test_a_name_searchs_fulltext_terms(text, expected):
    assert queries.fulltext_terms(text, names=True) == expected


def test_a_memory_searchs_fulltext_terms_keep_possessives_whole():
    assert queries.fulltext_terms("What is Caroline's job?") == "what is caroline's job\\?"


def test_repr_and_errors_never_show_the_password():
    store = Neo4jStore("bolt://127.0.0.1:7687", username="neo4j", password="s3cret-pw", embedding_dims=4)
    assert "s3cret-pw" not in repr(store) and "neo4j" in repr(store)
    assert redact_url("bolt://bob:pw@host:7687/x") == "bolt://host:7687/x"
    with pytest.raises(ConfigError) as info:
        Neo4jStore("neo4j://bob:s3cret-pw@host:7687", embedding_dims=4)
    assert "s3cret-pw" not in str(info.value)
    store.close()


def test_unreachable_server_raises_store_unavailable_naming_the_url():
    url = "bolt://127.0.0.1:1"
    with Neo4jStore(url, embedding_dims=4, connection_timeout=2.0, max_retry_time=0.2) as store:
        with pytest.raises(StoreUnavailableError, match=re.escape(url)) as info:
            store.entities(Scope.of(user_id="nobody"))
        assert info.value.__cause__ is not None
        with pytest.raises(StoreUnavailableError, match=re.escape(url)):
            store.write(GraphWrite("a", Scope.of(user_id="nobody"), T0, [ent("x", [1.0, 0, 0, 0])]))


#: the result summary the routing double reports: no server times
NO_TIMES = SimpleNamespace(result_available_after=None, result_consumed_after=None)


class FakeResult:
    def __init__(self, records):
        self.records = records

    def __iter__(self):
        return iter(self.records)

    def consume(self):
        return NO_TIMES


class FakeDriver:
    """Records how the store talks to the driver: routing, database, transactions."""

    execute_query_bookmark_manager = object()

    def __init__(self, records=()):
        self.records = list(records)
        self.calls: list[tuple] = []

    def execute_query(self, text, params, routing_, database_):
        self.calls.append(("execute_query", routing_, database_))
        return self.records, NO_TIMES, None

    def session(self, database, bookmark_manager, notifications_min_severity=None, default_access_mode=None):
        self.calls.append(("session", database, bookmark_manager is self.execute_query_bookmark_manager))
        assert notifications_min_severity == "OFF"
        driver = self

        class Session:
            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

            def execute_write(self, work):
                driver.calls.append(("execute_write",))
                return work(self)

            def run(self, text, params):
                driver.calls.append(("run",))
                return FakeResult([{"missing": 0, "deleted": 3, "scope_size": 1, "partitioned": False}])

        return Session()


def test_reads_are_routed_as_reads_on_the_named_database_and_writes_use_one_transaction():
    driver = FakeDriver()
    store = Neo4jStore("neo4j+s://cluster.example", database="memories", embedding_dims=4, driver=driver)
    scope = Scope.of(user_id="u")
    store.entities(scope)
    store.get_all(scope)
    assert driver.calls == [("execute_query", RoutingControl.READ, "memories")] * 2
    driver.calls.clear()
    store.write(GraphWrite("a", scope, T0, [ent("x", [1.0, 0, 0, 0])]))
    assert driver.calls == [("session", "memories", True), ("execute_write",), ("run",)]
    assert store.delete_all(scope) == 3
    assert store.round_trips == 4


# --- against a real server ----------------------------------------------------------------------------


@pytest.fixture
def store(neo4j_uri):
    with Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS) as s:
        s.setup()
        yield s


@pytest.fixture
def scope() -> Scope:
    return Scope.of(user_id=f"neo4j-test-{uuid.uuid4().hex[:10]}")


@pytest.mark.neo4j
def test_setup_is_idempotent_and_creates_the_schema(store, raw_driver):
    store.setup()
    records, _, _ = raw_driver.execute_query("SHOW INDEXES YIELD name, state RETURN name, state")
    indexes = {r["name"]: r["state"] for r in records}
    for name in (
        "entity_embedding", "text_fulltext", "entity_scope", "entity_user_id", "entity_agent_id", "entity_run_id",
        "memory_embedding", "memory_scope", "message_scope",
    ):  # fmt: skip
        assert indexes.get(name) == "ONLINE", name
    # the two fulltext indexes of earlier versions are replaced by text_fulltext (one Lucene refresh per commit)
    assert "entity_name" not in indexes and "memory_text" not in indexes
    records, _, _ = raw_driver.execute_query("SHOW CONSTRAINTS YIELD name RETURN name")
    assert {
        "entity_scope_canonical_unique", "entity_id_unique", "memory_id_unique", "conversation_scope_unique",
    } <= {r["name"] for r in records}  # fmt: skip
    records, _, _ = raw_driver.execute_query(
        "SHOW INDEXES YIELD name, options WHERE name IN ['entity_embedding', 'memory_embedding'] "
        "RETURN name, options.indexConfig AS config"
    )
    for r in records:
        assert r["config"]["vector.dimensions"] == TEST_DIMS and r["config"]["vector.similarity_function"] == "COSINE"


@pytest.mark.neo4j
def test_setup_reads_a_current_schema_once_and_recreates_what_is_missing(neo4j_uri, store, raw_driver):
    """A short-lived process pays one read for the schema when it is current (stores/neo4j/schema_check.py),
    and one for the plan generation (the counts store: stores/neo4j/plans.py); an index dropped behind
    graphmem's back is created again by the next setup."""
    with Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS, warm_plans=False) as again:
        again.setup()
        assert again.round_trips == 2  # SHOW INDEXES and the node count; no CREATE ... IF NOT EXISTS, no awaitIndexes
    raw_driver.execute_query("DROP CONSTRAINT summary_scope_unique IF EXISTS")
    with Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS, warm_plans=False) as repair:
        repair.setup()
        assert repair.round_trips > len(queries.SCHEMA)
    records, _, _ = raw_driver.execute_query("SHOW INDEXES YIELD name, state WHERE name = 'summary_scope_unique' RETURN state")
    assert [r["state"] for r in records] == ["ONLINE"]


def test_schema_check_knows_what_every_schema_statement_makes():
    """Each schema file creates or drops exactly one index the check can read (a new kind of statement
    the check cannot parse would otherwise make it skip creation wrongly, or never skip it)."""
    for name in queries.SCHEMA:
        want = schema_check.expected((name,))
        assert len(want.indexes) + len(want.dropped) == 1, name
    rows = [{"name": n, "type": kind, "state": "ONLINE", "owningConstraint": n if owned else None}
            for n, (kind, owned) in schema_check.expected(queries.SCHEMA).indexes.items()]
    assert schema_check.is_current(rows, schema_check.expected(queries.SCHEMA))
    assert not schema_check.is_current(rows[1:], schema_check.expected(queries.SCHEMA))
    assert not schema_check.is_current([*rows, {"name": "entity_name", "type": "FULLTEXT", "state": "ONLINE",
                                                "owningConstraint": None}], schema_check.expected(queries.SCHEMA))
    populating = [{**r, "state": "POPULATING"} if r["name"] == "memory_embedding" else r for r in rows]
    assert not schema_check.is_current(populating, schema_check.expected(queries.SCHEMA))
    unowned = [{**r, "owningConstraint": None} for r in rows]  # a plain index where a constraint belongs
    assert not schema_check.is_current(unowned, schema_check.expected(queries.SCHEMA))


@pytest.mark.neo4j
def test_setup_refuses_an_index_of_another_dimension(neo4j_uri, store):
    with Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS + 1) as other:
        with pytest.raises(ConfigError, match="different embedder"):
            other.setup()


@pytest.mark.neo4j
@pytest.mark.parametrize("plan", [VectorPlan(), VectorPlan(scan_limit=0)], ids=["scan", "vector-index"])
def test_match_exact_then_by_cosine_in_one_round_trip(neo4j_uri, scope, plan):
    with Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS, vector_plan=plan) as store:
        store.setup()
        alice, paris = ent("Alice", axis(0)), ent("Paris", axis(1))
        add(store, scope, [alice, paris])
        candidates = [
            EntityCandidate("alice", axis(5)),  # exact name wins over any vector
            EntityCandidate("alicia", unit(1.0, 0.0, 0.2)),  # cosine 0.98 with Alice
            EntityCandidate("tokyo", axis(7)),  # nothing similar
        ]
        before = store.round_trips
        found = store.match_entities(scope, candidates, threshold=0.7)
        assert store.round_trips == before + 1
        assert found[0] is not None and found[0].id == alice.id and found[0].score == 1.0
        assert found[1] is not None and found[1].id == alice.id and found[1].score == pytest.approx(0.98, abs=1e-3)
        assert found[2] is None
        before = store.round_trips
        names = ["alice", "paris", *(f"c{i}" for i in range(48))]
        many = store.match_entities(scope, [EntityCandidate(n, axis(2 + i % (TEST_DIMS - 2))) for i, n in enumerate(names)], 0.7)
        assert store.round_trips == before + 1 and len(many) == 50
        assert many[0].id == alice.id and many[1].id == paris.id and all(m is None for m in many[2:])


@pytest.mark.neo4j
def test_write_round_trips_do_not_grow_with_the_number_of_relations(store, scope):
    hub = ent("hub", axis(0))
    spokes = [ent(f"spoke {i}", axis(i + 1)) for i in range(50)]
    before = store.round_trips
    add(store, scope, [hub, spokes[0]], [rel(hub, "LINKS", spokes[0])])
    one = store.round_trips - before
    before = store.round_trips
    add(store, scope, [replace(hub, is_new=False), *spokes], [rel(hub, "LINKS", s) for s in spokes])
    assert store.round_trips - before == one == 1
    relations = store.get_all(scope)
    assert len(relations) == 50  # the first LINKS to spoke 0 got a second mention, not a twin
    first = next(r for r in relations if r.destination == "spoke 0")
    assert first.mentions == 2 and len(first.provenance) == 2
    assert len(store.entities(scope)) == 51


@pytest.mark.neo4j
def test_hostile_relationship_types_are_stored_as_parameters(store, scope, raw_driver):
    canary = Scope.of(user_id=f"canary-{uuid.uuid4().hex[:8]}")
    c1, c2 = ent("canary", axis(3)), ent("cage", axis(4))
    add(store, canary, [c1, c2], [rel(c1, "LIVES_IN", c2)])
    hostile = [
        "x`]->() DETACH DELETE n //",
        "`) MATCH (n) DETACH DELETE n //",
        "lives in",
        'said "hi"',
        "it's",
        "über-cool",
        "😀 likes 🐍",
        "a-b c_d",
        "ñandú",
        "关系",
    ]
    a, b = ent("A", axis(0)), ent("B", axis(1))
    add(store, scope, [a, b], [rel(a, sanitize_relation_type(t), b) for t in hostile])
    # the contract sanitises types, but even a raw hostile type is only ever a parameter
    add(store, scope, [], [rel(a, "x`]->() DETACH DELETE n //", b)])
    types = {r.relationship for r in store.get_all(scope)}
    assert types == {sanitize_relation_type(t) for t in hostile} | {"x`]->() DETACH DELETE n //"}
    assert [e.name for e in store.entities(scope)] == ["A", "B"]
    assert [e.name for e in store.entities(canary)] == ["canary", "cage"] and len(store.get_all(canary)) == 1
    records, _, _ = raw_driver.execute_query("MATCH ()-[r]->() WHERE r.scope = $scope RETURN count(r) AS n", scope=scope.key)
    assert records[0]["n"] == len(hostile) + 1


@pytest.mark.neo4j
def test_hostile_scope_ids_are_stored_and_read_back_exactly(store):
    scope = Scope.of(
        user_id=f'o\'brien "x" `y` {{z}} $p {uuid.uuid4().hex[:6]}',
        agent_id="}) DETACH DELETE n //",
        run_id='name:"a" OR *:* \\',
    )
    name = "Robert'); DROP TABLE x; -- `{}`"
    a, b = ent(name, axis(0)), ent('Zürich "quoted"', axis(1))
    add(store, scope, [a, b], [rel(a, "LIVES_IN", b)])
    assert [e.name for e in store.entities(scope)] == [name, 'Zürich "quoted"']
    (relation,) = store.get_all(scope)
    assert (relation.source, relation.destination) == (name, 'Zürich "quoted"')
    found = store.search_graph(scope, GraphQuery(embedding=axis(9), text='robert "drop" zürich', seed_canonicals=[]))
    assert [r.id for r in found] == [relation.id] and found[0].scores["fulltext"] == pytest.approx(1.0)
    assert store.entities(Scope.of(user_id=scope.user_id + "x")) == []
    assert store.get_all(Scope.of(user_id=scope.user_id, agent_id=scope.agent_id, run_id=scope.run_id + "x")) == []
    assert len(store.get_all(Scope.of(user_id=scope.user_id))) == 1  # a user read sees the user's runs
    assert store.delete_all(Scope.of(user_id=scope.user_id)) == 2


@pytest.mark.neo4j
def test_invalidation_is_soft_and_reasserting_creates_a_new_instance(store, scope):
    me, berlin, bob, acme = ent("me", axis(0)), ent("Berlin", axis(1)), ent("Bob", axis(2)), ent("Acme", axis(3))
    add(store, scope, [me, berlin, bob, acme], [rel(me, "LIVES_IN", berlin), rel(bob, "WORKS_AT", acme)], at=T0)
    (first,) = store.relations_around(scope, [me.id])
    (other,) = store.relations_around(scope, [bob.id])
    t1, t2 = T0 + timedelta(days=30), T0 + timedelta(days=60)
    # one relation touches the add's entities (found around them), the other does not (scope lookup)
    add(store, scope, [replace(me, is_new=False)], invalidations=[Invalidation(first.id, t1), Invalidation(other.id, t1)], at=t1)
    assert store.relations_around(scope, [me.id, bob.id]) == []
    kept = store.get_all(scope, include_invalidated=True)
    assert [(r.id, r.invalid_at, r.expired_at) for r in kept] == [(first.id, t1, t1), (other.id, t1, t1)]
    add(store, scope, [replace(bob, is_new=False)], [rel(bob, "WORKS_AT", acme, valid_at=t2)], at=t2)
    again = [
        EntityWrite(me.id, "me", "me", "thing", axis(0), False),
        EntityWrite(berlin.id, "Berlin", "berlin", "thing", axis(1), False),
    ]
    add(store, scope, again, [RelationWrite(me.id, "LIVES_IN", berlin.id, t2)], at=t2)
    history = [r for r in store.get_all(scope, include_invalidated=True) if r.relationship == "LIVES_IN"]
    assert [r.is_current for r in history] == [False, True] and history[1].id != first.id
    # time travel: valid at the time, even though it was retired later
    past = store.search_graph(scope, GraphQuery(embedding=axis(0), text="", seed_canonicals=["me"], as_of=T0 + timedelta(days=1)))
    assert [r.id for r in past] == [first.id]
    now = store.search_graph(scope, GraphQuery(embedding=axis(0), text="", seed_canonicals=["me"]))
    assert [r.id for r in now] == [history[1].id]
    everything = store.search_graph(
        scope, GraphQuery(embedding=axis(0), text="", seed_canonicals=["me"], include_invalidated=True)
    )
    assert {r.id for r in everything} == {r.id for r in history}


@pytest.mark.neo4j
def test_scopes_never_leak(store):
    one, two = Scope.of(user_id=f"a-{uuid.uuid4().hex[:8]}"), Scope.of(user_id=f"b-{uuid.uuid4().hex[:8]}")
    a1, p1 = ent("Alice", axis(0)), ent("Paris", axis(1))
    a2, p2 = ent("Alice", axis(0)), ent("Paris", axis(1))
    add(store, one, [a1, p1], [rel(a1, "LIVES_IN", p1)])
    add(store, two, [a2, p2], [rel(a2, "VISITED", p2)])
    assert {e.id for e in store.entities(one)} == {a1.id, p1.id}
    assert store.match_entities(two, [EntityCandidate("alice", axis(0))], 0.7)[0].id == a2.id
    assert [r.relationship for r in store.relations_around(two, [a1.id, a2.id])] == ["VISITED"]
    found = store.search_graph(two, GraphQuery(embedding=axis(0), text="alice paris", seed_canonicals=["alice"]))
    assert [r.relationship for r in found] == ["VISITED"]
    # invalidating another scope's relation is ignored
    (other,) = store.get_all(one)
    add(store, two, invalidations=[Invalidation(other.id, T0)])
    assert store.get_all(one)[0].is_current
    assert store.delete_all(two) == 2 and len(store.entities(one)) == 2


@pytest.mark.neo4j
@pytest.mark.parametrize("plan", [VectorPlan(), VectorPlan(scan_limit=0)], ids=["scan", "vector-index"])
def test_search_graph_seeds_by_vector_fulltext_and_name(neo4j_uri, scope, plan):
    with Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS, vector_plan=plan) as store:
        store.setup()
        me, tokyo, sushi, jazz = (
            ent(scope.user_id, axis(0)),
            ent("Tokyo", axis(1)),
            ent("sushi bar", axis(2)),
            ent("jazz", axis(3)),
        )
        add(
            store, scope, [me, tokyo, sushi, jazz], [rel(me, "LIVES_IN", tokyo), rel(me, "LIKES", sushi), rel(tokyo, "HAS", jazz)]
        )
        before = store.round_trips
        by_vector = store.search_graph(
            scope, GraphQuery(embedding=unit(0.0, 0.0, 0.0, 1.0), text="", seed_canonicals=[], threshold=0.5)
        )
        assert store.round_trips == before + 1
        assert [(r.source, r.relationship, r.destination) for r in by_vector] == [("Tokyo", "HAS", "jazz")]
        # the endpoint's cosine is entity proximity ("seed"); "vector" is the relation's own fact (none here)
        assert by_vector[0].scores == {"vector": 0.0, "fulltext": 0.0, "seed": pytest.approx(1.0)}
        by_text = store.search_graph(
            scope, GraphQuery(embedding=axis(20), text="Where is the SUSHI?", seed_canonicals=[], threshold=0.9)
        )
        assert [(r.destination, r.scores["fulltext"]) for r in by_text] == [("sushi bar", pytest.approx(1.0))]
        by_name = store.search_graph(
            scope, GraphQuery(embedding=axis(20), text="AND OR (", seed_canonicals=[canonical_name(scope.user_id)], threshold=0.9)
        )
        assert {r.relationship for r in by_name} == {"LIVES_IN", "LIKES"}
        assert all(r.scores["seed"] == 1.0 for r in by_name)


@pytest.mark.neo4j
def test_twins_cannot_be_created_and_relations_follow_the_stored_entity(store, scope):
    first, twin = ent("Alice", axis(0)), ent("alice", axis(0))  # same canonical, another id
    other = ent("Bob", axis(1))
    add(store, scope, [first])
    add(store, scope, [twin, other], [rel(twin, "KNOWS", other)])  # a concurrent add's view
    (alice, bob) = store.entities(scope)
    assert alice.id == first.id and alice.mentions == 2
    assert [(r.source_id, r.destination_id) for r in store.get_all(scope)] == [(first.id, bob.id)]


@pytest.mark.neo4j
def test_concurrent_adds_of_one_name_make_one_entity(store, scope):
    def one_add(i: int) -> None:
        shared, own = ent("Shared Place", axis(0)), ent(f"visitor {i}", axis(i + 1))
        add(store, scope, [shared, own], [rel(own, "VISITED", shared)], add_id=f"add-{i}")

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(one_add, range(8)))
    shared = [e for e in store.entities(scope) if e.canonical == "shared place"]
    assert len(shared) == 1 and shared[0].mentions == 8
    relations = store.get_all(scope)
    assert len(relations) == 8 and {r.destination_id for r in relations} == {shared[0].id}


@pytest.mark.neo4j
def test_a_failed_write_leaves_nothing(store, scope):
    a = ent("A", axis(0))
    with pytest.raises(InvalidInputError):
        add(store, scope, [a], [RelationWrite(a.id, "KNOWS", "no-such-entity", T0)])
    assert store.entities(scope) == [] and store.get_all(scope) == []
    with pytest.raises(InvalidInputError, match="dimensions"):
        add(store, scope, [ent("B", [1.0, 0.0])])


@pytest.mark.neo4j
def test_times_come_back_as_aware_utc_and_get_all_limits(store, scope):
    a, b, c = ent("A", axis(0)), ent("B", axis(1)), ent("C", axis(2))
    local = timezone(timedelta(hours=5))
    add(store, scope, [a, b, c], [rel(a, "R1", b, valid_at=datetime(2020, 5, 1, 12, tzinfo=local)), rel(b, "R2", c)], at=T0)
    relations = store.get_all(scope, limit=1)
    assert len(relations) == 1
    assert relations[0].valid_at == datetime(2020, 5, 1, 7, tzinfo=timezone.utc)
    assert relations[0].valid_at.tzinfo is not None and relations[0].valid_at.utcoffset() == timedelta(0)
    assert relations[0].created_at == T0
    assert all(e.created_at == T0 and e.created_at.tzinfo is not None for e in store.entities(scope))


@pytest.mark.neo4j
def test_server_errors_are_translated(store):
    with pytest.raises(StoreError) as info:
        store._query(queries.Statement("await_indexes", {"timeout_seconds": "not a number"}), read=False)
    assert not isinstance(info.value, StoreUnavailableError) and info.value.__cause__ is not None


# --- memory facts, conversation log, time, display labels -------------------------------------------


def normalise(values: list[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in values))
    return [v / norm for v in values]


def fact(text: str, embedding: list[float], metadata=None, memory_id=None, event="ADD", entity_ids=()) -> MemoryWrite:
    return MemoryWrite(event, memory_id or new_id(), text, embedding, metadata, "user", list(entity_ids))


def said(*contents: str, at: datetime = T0) -> list[LoggedMessage]:
    return [LoggedMessage("user", c, at) for c in contents]


def node_props(raw_driver, label: str, scope: Scope) -> list[dict]:
    # label comes from this test file only
    records, _, _ = raw_driver.execute_query(
        f"MATCH (n:{label}) WHERE n.scope = $scope RETURN properties(n) AS p, labels(n) AS labels ORDER BY n.seq",
        scope=scope.key,
    )
    return [{**r["p"], "_labels": set(r["labels"])} for r in records]


@pytest.mark.neo4j
def test_every_new_method_is_one_round_trip(store, scope):
    alice, tea = ent("Alice", axis(0)), ent("green tea", axis(1))
    memories = [fact(f"fact {i}", axis(i), {"i": i}, entity_ids=[alice.id]) for i in range(20)]
    write = GraphWrite(new_id(), scope, T0, [alice, tea], [rel(alice, "LIKES", tea)], [], memories, said("a", "b", "c"))
    before = store.round_trips
    store.write(write)
    assert store.round_trips - before == 1  # graph, 20 memories and 3 messages: one statement
    calls = [
        lambda: store.similar_memories(scope, [axis(0), axis(1), axis(2)], top_k=2),
        lambda: store.search_memories(scope, MemoryQuery(axis(0), "fact", top_k=3, filters=parse({"i": 3}))),
        lambda: store.search_memories(scope, MemoryQuery(axis(0), "fact", top_k=3)),
        lambda: store.get_memory(memories[0].id),
        lambda: store.list_memories(scope, limit=5),
        lambda: store.delete_memory(memories[1].id),
        lambda: store.conversation(scope, 2),
        lambda: store.set_summary(scope, "Alice likes tea.", 3, T0),
        lambda: store.timeline(scope, "alice"),
        lambda: store.search_graph(scope, GraphQuery(axis(0), "tea", ["alice"], known_at=T0)),
        lambda: store.delete_all(scope),
    ]
    for call in calls:
        before = store.round_trips
        call()
        assert store.round_trips - before == 1


@pytest.mark.neo4j
@pytest.mark.parametrize("plan", [VectorPlan(), VectorPlan(scan_limit=0)], ids=["scan", "vector-index"])
def test_memory_search_plans_agree(neo4j_uri, scope, plan):
    # directions of their own: the shared database holds many memories on the axes, and the index
    # plan only sees the globally nearest k
    rng = random.Random(scope.key)
    base, side, apart = (normalise([rng.gauss(0, 1) for _ in range(TEST_DIMS)]) for _ in range(3))
    tilted = normalise([b + s for b, s in zip(base, side, strict=False)])
    with Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS, vector_plan=plan) as store:
        store.setup()
        near, mid, far = fact("walks the dog", base), fact("plays tennis", tilted), fact("owns a dog", apart)
        gone = fact("hates dogs", base)
        store.write(GraphWrite(new_id(), scope, T0, memories=[near, mid, far, gone]))
        store.write(
            GraphWrite(new_id(), scope, T0 + timedelta(hours=1), memories=[fact("", None, event="DELETE", memory_id=gone.id)])
        )
        (hits,) = store.similar_memories(scope, [base], top_k=2)
        cosine = sum(b * t for b, t in zip(base, tilted, strict=False))
        assert [m.id for m in hits] == [near.id, mid.id] and hits[1].score == pytest.approx(cosine, abs=1e-4)
        found = store.search_memories(scope, MemoryQuery(base, "dog", top_k=1))
        assert [m.id for m in found] == [near.id]  # best by vector and by text ("dogs" is another token)
        assert found[0].scores == {"vector": pytest.approx(1.0, abs=1e-4), "fulltext": pytest.approx(1.0)}
        then = store.search_memories(scope, MemoryQuery(base, "", top_k=2, as_of=T0 + timedelta(minutes=1)))
        assert {m.id for m in then} == {near.id, gone.id}


@pytest.mark.neo4j
def test_hostile_metadata_keys_are_parameters_and_never_reach_other_properties(store, scope, raw_driver):
    hostile = {
        "id": "not-the-id", "scope": "not-the-scope", "deleted_at": "never", "x`] DETACH DELETE m //": 1,
        "}) MATCH (n) DETACH DELETE n //": True, "a.b": 2.5, "": "empty key", "$key": "dollar", "meta.x": "double",
        "Ünï 😀": "ü", "nested": {"k": 1},
    }  # fmt: skip
    tagged, plain = fact("tagged", axis(0), hostile), fact("plain", axis(1), {"k": "v"})
    canary = Scope.of(user_id=f"canary-{uuid.uuid4().hex[:8]}")
    store.write(GraphWrite(new_id(), canary, T0, memories=[fact("canary", axis(0), hostile)]))
    store.write(GraphWrite(new_id(), scope, T0, memories=[tagged, plain]))
    (node,) = [n for n in node_props(raw_driver, "Memory", scope) if n["id"] == tagged.id]
    assert (node["scope"], node.get("deleted_at")) == (scope.key, None)  # metadata never overwrites them
    assert node["meta.id"] == "not-the-id" and node["meta.meta.x"] == "double" and "meta.nested" not in node

    def found(filters):
        return {m.id for m in store.search_memories(scope, MemoryQuery(axis(5), "", top_k=10, filters=parse(filters)))}

    for key, value in hostile.items():
        if key not in ("nested", ""):
            assert found({key: value}) == {tagged.id}, key
    assert found({"scope": scope.key}) == found({"id": plain.id}) == set()  # only meta.* is compared
    assert found({"nested": "*"}) == set()  # a non-scalar value is not filterable
    for bad in ({"nested": {"k": 1}}, {"k": None}, {1: "v"}, {"": "empty key"}):
        with pytest.raises(InvalidInputError):
            found(bad)
    assert found({"a.b": 2.5, "k": "v"}) == set() and found({"k": "v"}) == {plain.id}
    assert store.get_memory(tagged.id).metadata == hostile
    assert [m.text for m in store.list_memories(canary)] == ["canary"]


@pytest.mark.neo4j
def test_metadata_update_replaces_the_meta_properties(store, scope, raw_driver):
    m = fact("x", axis(0), {"a": 1, "b": "x"})
    store.write(GraphWrite(new_id(), scope, T0, memories=[m]))
    store.write(GraphWrite(new_id(), scope, T0, memories=[MemoryWrite("UPDATE", m.id, "y", axis(1), {"b": "y"})]))
    (node,) = node_props(raw_driver, "Memory", scope)
    assert {k: v for k, v in node.items() if k.startswith("meta.")} == {"meta.b": "y"}
    store.write(GraphWrite(new_id(), scope, T0, memories=[MemoryWrite("UPDATE", m.id, "z", axis(1), None)]))
    (node,) = node_props(raw_driver, "Memory", scope)
    assert node["text"] == "z" and node["meta.b"] == "y" and store.get_memory(m.id).metadata == {"b": "y"}


@pytest.mark.neo4j
def test_memories_mention_the_stored_entities(store, scope, raw_driver):
    first = ent("Boston", axis(0))
    add(store, scope, [first])
    twin = ent("boston", axis(0))  # a concurrent add's view: merged into the first
    m = fact("lives in Boston", axis(0), entity_ids=[twin.id, new_id()])
    store.write(GraphWrite(new_id(), scope, T0, [twin], memories=[m]))
    records, _, _ = raw_driver.execute_query(
        "MATCH (m:Memory {id: $id})-[:MENTIONS]->(e:Entity) RETURN collect(e.id) AS ids", id=m.id
    )
    assert records[0]["ids"] == [first.id]


@pytest.mark.neo4j
def test_concurrent_adds_of_one_scope_never_share_a_seq(store, scope, raw_driver):
    def one_add(i: int) -> None:
        write = GraphWrite(f"add-{i}", scope, T0, messages=said(f"{i}a", f"{i}b", f"{i}c"), keep_messages=1000)
        store.write(write)

    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(one_add, range(8)))
    log = store.conversation(scope, 100)
    assert [m.seq for m in log.messages] == list(range(1, 25)) and log.last_seq == 24
    for i in range(8):  # each add's messages got consecutive seqs, in order
        seqs = [m.seq for m in log.messages if m.add_id == f"add-{i}"]
        assert [m.content for m in log.messages if m.add_id == f"add-{i}"] == [f"{i}a", f"{i}b", f"{i}c"]
        assert seqs == list(range(seqs[0], seqs[0] + 3))
    assert log.adds_since_summary == 8 and log.summary is None
    (conversation,) = node_props(raw_driver, "Conversation", scope)
    assert conversation["user_id"] == scope.user_id and conversation["last_seq"] == 24

    with ThreadPoolExecutor(max_workers=8) as pool:
        stored = list(pool.map(lambda i: store.set_summary(scope, f"through {i}", i, T0), range(1, 9)))
    log = store.conversation(scope, 0)
    assert (log.summary, log.summary_through, log.messages) == ("through 8", 8, [])
    assert stored[-1] is True  # the newest always wins, however the eight interleaved


@pytest.mark.neo4j
def test_log_keeps_the_newest_messages_and_the_summary_only_moves_forward(store, scope, raw_driver):
    store.write(GraphWrite("first", scope, T0, messages=said("1", "2", "3"), keep_messages=3))
    at = T0 + timedelta(minutes=1)
    store.write(GraphWrite("second", scope, at, messages=said("4", "5", at=at), keep_messages=3))
    log = store.conversation(scope, 10)
    assert [(m.seq, m.content, m.add_id) for m in log.messages] == [(3, "3", "first"), (4, "4", "second"), (5, "5", "second")]
    assert log.messages[-1].timestamp == at and log.last_seq == 5 and log.adds_since_summary == 2
    assert [m.seq for m in store.conversation(scope, 2).messages] == [4, 5]
    assert len(node_props(raw_driver, "Message", scope)) == 3
    assert store.set_summary(scope, "up to 4", 4, at) is True
    assert store.set_summary(scope, "up to 3", 3, at) is False and store.set_summary(scope, "again 4", 4, at) is False
    log = store.conversation(scope, 10)
    assert (log.summary, log.summary_through, log.summary_updated_at, log.adds_since_summary) == ("up to 4", 4, at, 1)
    fresh = Scope.of(user_id=f"fresh-{uuid.uuid4().hex[:8]}")
    assert store.set_summary(fresh, "first", 0, at) is True and store.conversation(fresh, 5).summary == "first"
    store.delete_all(scope)
    assert store.conversation(scope, 10) == Conversation()
    assert node_props(raw_driver, "Message", scope) == [] and node_props(raw_driver, "Conversation", scope) == []


@pytest.mark.neo4j
def test_display_labels_come_only_from_the_allow_list(store, scope, raw_driver):
    types = {
        "Alice": "person", "Acme": " Company ", "Paris": "CITY", "Root": "admin", "Eve": "Person`:Admin",
        "Mallory": "person) DETACH DELETE n //", "Thing": "", "Entity": "entity",
    }  # fmt: skip
    written = [EntityWrite(new_id(), n, canonical_name(n), t, axis(i), True) for i, (n, t) in enumerate(types.items())]
    add(store, scope, written)
    labels = {n["name"]: n["_labels"] - {"Entity"} for n in node_props(raw_driver, "Entity", scope)}
    assert labels == {
        "Alice": {"Person"}, "Acme": {"Organization"}, "Paris": {"Place"}, "Root": set(), "Eve": set(),
        "Mallory": set(), "Thing": set(), "Entity": set(),
    }  # fmt: skip
    assert {e.name for e in store.entities(scope)} == set(types)  # graphmem still matches on :Entity only
    add(store, scope, [EntityWrite(written[3].id, "Root", "root", "person", axis(3), False)])  # a touch adds no label
    assert {n["name"]: n["_labels"] for n in node_props(raw_driver, "Entity", scope)}["Root"] == {"Entity"}


def _visible_now(relation, as_of, known_at, now):
    return relation_visible(
        relation.valid_at, relation.invalid_at, relation.created_at, relation.expired_at, as_of, known_at, now
    )


@pytest.mark.neo4j
def test_search_and_get_all_filter_exactly_like_relation_visible(store, scope):
    now = datetime.now(timezone.utc)
    day = timedelta(days=1)
    hub = ent("hub", axis(0))
    spokes = [ent(f"spoke {i}", axis(i + 1)) for i in range(6)]
    t0, t1, t2 = now - 30 * day, now - 20 * day, now - 10 * day
    add(store, scope, [hub, *spokes[:4]], [
        rel(hub, "OPEN", spokes[0], valid_at=t0),
        rel(hub, "CLOSED", spokes[1], valid_at=t0, invalid_at=t1),
        rel(hub, "ENDS_LATER", spokes[2], valid_at=t0, invalid_at=now + 30 * day),  # moving out next month
        rel(hub, "RETIRED", spokes[3], valid_at=t0),
    ], at=t0)  # fmt: skip
    retired = next(r for r in store.get_all(scope) if r.relationship == "RETIRED")
    ending = next(r for r in store.get_all(scope) if r.relationship == "ENDS_LATER")
    add(store, scope, [replace(hub, is_new=False)], invalidations=[Invalidation(retired.id, t2)], at=t2 + day)
    add(store, scope, [replace(hub, is_new=False)], invalidations=[Invalidation(ending.id, now + 30 * day)], at=t2 + day)
    add(store, scope, [replace(hub, is_new=False), spokes[4], spokes[5]], [
        rel(hub, "PLANNED", spokes[4], valid_at=now + 5 * day),
        rel(hub, "LEARNED_LATE", spokes[5], valid_at=t0),
    ], at=t2)  # fmt: skip
    versions = store.get_all(scope, include_invalidated=True)
    assert len(versions) == 6
    moments = [None, t0 - day, t0, t1 - day, t1, t2 - day, t2, t2 + day, now, now + 10 * day, now + 40 * day]
    for as_of in moments:
        for known_at in moments:
            query = GraphQuery(axis(40), "", ["hub"], as_of=as_of, known_at=known_at)
            expected = {r.relationship for r in versions if _visible_now(r, as_of, known_at, now)}
            assert {r.relationship for r in store.search_graph(scope, query)} == expected, (as_of, known_at)
    assert {r.relationship for r in store.get_all(scope)} == {"OPEN", "ENDS_LATER", "LEARNED_LATE"}
    assert {r.relationship for r in store.search_graph(scope, GraphQuery(axis(40), "", ["hub"]))} == {
        "OPEN", "ENDS_LATER", "LEARNED_LATE"
    }  # fmt: skip


@pytest.mark.neo4j
def test_timeline_lists_every_version_in_event_time(store, scope):
    me, boston, denver, acme = ent("me", axis(0)), ent("Boston", axis(1)), ent("Denver", axis(2)), ent("Acme", axis(3))
    t = [T0 + timedelta(days=d) for d in range(4)]
    add(store, scope, [me, boston], [rel(me, "LIVES_IN", boston, valid_at=t[1])], at=t[1])
    (old,) = store.get_all(scope)
    add(store, scope, [replace(me, is_new=False), denver], [rel(me, "LIVES_IN", denver, valid_at=t[2])],
        [Invalidation(old.id, t[2])], at=t[3])  # fmt: skip
    add(store, scope, [replace(me, is_new=False), acme], [rel(acme, "EMPLOYS", me, valid_at=t[0])], at=t[3])
    add(store, scope, [ent("other", axis(4)), ent("thing", axis(5))])
    got = store.timeline(scope, "me")
    assert [(r.source, r.relationship, r.destination) for r in got] == [
        ("Acme", "EMPLOYS", "me"), ("me", "LIVES_IN", "Boston"), ("me", "LIVES_IN", "Denver"),
    ]  # fmt: skip
    assert got[1].expired_at == t[3] and store.timeline(scope, "nobody") == []


@pytest.mark.neo4j
def test_the_store_silences_server_notifications(neo4j_uri, scope, caplog):
    caplog.set_level(logging.DEBUG, logger="neo4j.notifications")
    with Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS) as store:
        store.setup()  # "index already exists" notes and the like
        add(store, scope, [ent("A", axis(0))])
        store.conversation(scope, 5)
        store.search_memories(scope, MemoryQuery(axis(0), "a", filters=parse({"x": 1})))
    assert [r for r in caplog.records if r.name.startswith("neo4j.notifications")] == []


# --- scope partitions -----------------------------------------------------------------------------


def _random_unit(rng: random.Random) -> list[float]:
    vec = [rng.gauss(0, 1) for _ in range(TEST_DIMS)]
    norm = math.sqrt(sum(v * v for v in vec))
    return [v / norm for v in vec]


def test_a_large_scope_gets_its_own_vector_index_and_searches_use_it(neo4j_uri):
    plan = VectorPlan(scan_limit=5, partition_size=20)
    rng = random.Random(7)
    scope = Scope.of(user_id=f"big-{uuid.uuid4().hex[:8]}")
    other = Scope.of(user_id=f"other-{uuid.uuid4().hex[:8]}")
    with Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS, vector_plan=plan) as store:
        store.setup()
        people = [ent(f"person {i}", _random_unit(rng)) for i in range(30)]
        add(store, scope, people, [rel(people[i], "knows", people[i + 1]) for i in range(29)])
        twin = ent("person 3", people[3].embedding)  # same vector in another scope: must never leak
        add(store, other, [twin])
        names = partition.names(scope)
        label, index = names["label"], names["index"]
        with GraphDatabase.driver(neo4j_uri, auth=None) as driver:
            marker, _, _ = driver.execute_query("MATCH (p:ScopePartition {scope: $s}) RETURN p.index AS index", s=scope.key)
            labelled, _, _ = driver.execute_query(
                "MATCH (n:Entity) WHERE n.scope = $s RETURN count(n) AS all, sum(CASE WHEN $l IN labels(n) THEN 1 ELSE 0 END) AS tagged",
                s=scope.key, l=label, routing_=RoutingControl.READ,
            )
            indexes, _, _ = driver.execute_query("SHOW VECTOR INDEXES YIELD name WHERE name = $i RETURN name", i=index)
        assert [r["index"] for r in marker] == [index] and len(indexes) == 1
        assert labelled[0]["all"] == labelled[0]["tagged"] == 30
        # every process's setup reads graphmem's own indexes, not the partitions' (two more per large scope)
        setup_read = {r["name"] for r in store._query(queries.show_indexes(), read=True)}
        assert index not in setup_read and names["memory_index"] not in setup_read
        assert set(queries.VECTOR_INDEXES) | {"text_fulltext", "entity_id_unique"} <= setup_read

        # resolution and search go through the partition index and stay in the scope
        (found,) = store.match_entities(scope, [EntityCandidate("someone else", people[12].embedding)], 0.9)
        assert found is not None and found.id == people[12].id
        hits = store.search_graph(scope, GraphQuery(embedding=people[20].embedding, text="", seed_canonicals=[], top_k=1, threshold=0.9))
        assert hits and {h.source_id for h in hits} | {h.destination_id for h in hits} >= {people[20].id}
        assert all(twin.id not in (h.source_id, h.destination_id) for h in hits)

        # an entity created after partitioning carries the label and is found through the index
        late = ent("late arrival", _random_unit(rng))
        add(store, scope, [late])
        (again,) = store.match_entities(scope, [EntityCandidate("late", late.embedding)], 0.9)
        assert again is not None and again.id == late.id
        # memories of a partitioned scope carry its memory label and are found through its index
        facts = [MemoryWrite("ADD", new_id(), f"fact {i} likes long walks", _random_unit(rng), {}, "user") for i in range(8)]
        store.write(GraphWrite(new_id(), scope, T0, memories=facts))  # more than scan_limit: the index path
        fact = facts[5]
        hits = store.search_memories(scope, MemoryQuery(fact.embedding, "", top_k=3))
        assert hits and hits[0].id == fact.id
        assert store.similar_memories(scope, [fact.embedding], 1)[0][0].id == fact.id
        with GraphDatabase.driver(neo4j_uri, auth=None) as driver:
            rows, _, _ = driver.execute_query("MATCH (m:Memory {id: $id}) RETURN labels(m) AS labels", id=fact.id)
        assert names["memory_label"] in rows[0]["labels"]
        store.delete_all(scope)
        store.delete_all(other)


@pytest.mark.neo4j
def test_an_add_never_waits_for_a_summary_being_stored(store, raw_driver, scope):
    """set_summary writes the scope's (:Summary) node, never the (:Conversation) an add's write locks
    to log messages: with a summary's transaction held open (its locks held), the add still commits."""
    store.write(GraphWrite("a1", scope, T0, messages=[LoggedMessage("user", "hello", T0)]))
    text, params = log_queries.set_summary(scope, "Hello said.", 1, T0).run_args()
    with raw_driver.session() as session, session.begin_transaction() as held:
        assert held.run(text, params).single()["newer"] is True
        with ThreadPoolExecutor(1) as pool:  # the add, while the summary's transaction is open
            pool.submit(store.write, GraphWrite("a2", scope, T0, messages=[LoggedMessage("user", "again", T0)])).result(timeout=60)
        held.commit()
    log = store.conversation(scope, 10)
    assert (log.summary, log.summary_through, log.last_seq, log.adds_since_summary) == ("Hello said.", 1, 2, 1)
    assert store.set_summary(scope, "Older.", 1, T0) is False  # covers no more than the stored one
    assert store.set_summary(scope, "Both said.", 2, T0) is True
    assert store.conversation(scope, 0).summary == "Both said."
    records, _, _ = raw_driver.execute_query("MATCH (s:Summary) WHERE s.scope = $scope RETURN count(s) AS n", scope=scope.key)
    assert records[0]["n"] == 1  # the newer replaced the older
    store.delete_all(scope)
    records, _, _ = raw_driver.execute_query("MATCH (s:Summary) WHERE s.scope = $scope RETURN count(s) AS n", scope=scope.key)
    assert records[0]["n"] == 0


@pytest.mark.neo4j
def test_a_summary_kept_on_the_conversation_node_by_an_older_version_is_still_read(store, raw_driver, scope):
    store.write(GraphWrite("a1", scope, T0, messages=[LoggedMessage("user", "hello", T0)]))
    raw_driver.execute_query("MATCH (c:Conversation {scope: $scope}) SET c.summary = 'Old.', c.summary_through = 1",
                             scope=scope.key)
    log = store.conversation(scope, 10)
    assert (log.summary, log.summary_through, log.adds_since_summary) == ("Old.", 1, 0)
    assert store.set_summary(scope, "New.", 1, T0) is True  # the first (:Summary) takes over
    assert store.conversation(scope, 10).summary == "New."
    store.delete_all(scope)


def test_times_read_as_text_parse_to_the_same_utc_datetimes():
    from graphmem.stores.neo4j.values import from_db_time

    assert from_db_time("2024-01-01T00:00:00Z") == T0
    assert from_db_time("2024-01-01T00:00:00.12Z") == T0.replace(microsecond=120000)
    assert from_db_time("2024-01-01T00:00:00.123456789Z") == T0.replace(microsecond=123456)
    assert from_db_time("2024-01-01T02:00:00+02:00") == T0
    with pytest.raises(StoreError, match="yesterday"):
        from_db_time("yesterday")


@pytest.mark.neo4j
def test_the_add_path_reads_times_as_written(store, scope):
    """resolve.cypher and conversation.cypher return times as text; they read back exactly."""
    at = T0.replace(microsecond=654321)
    e = ent("Alice", axis(0))
    write = GraphWrite("a1", scope, at, [e], [rel(e, "KNOWS", e)], messages=[LoggedMessage("user", "hi", at)])
    write.memories = [MemoryWrite("ADD", "m-" + scope.key[-8:], "Alice is here", axis(0), None, "user", [e.id])]
    store.write(write)
    found = store.resolve(scope, [EntityCandidate("alice", axis(0), mention=True)], 0.7, [axis(0)], 5, 20)
    assert found.matches[0].created_at == at and found.relations[0].created_at == at
    assert found.similar[0][0].created_at == at and found.mentioning[0].valid_at == at
    assert store.conversation(scope, 5).messages[0].timestamp == at
    store.delete_all(scope)


@pytest.mark.neo4j
def test_setup_replaces_the_fulltext_indexes_of_earlier_versions(store, raw_driver):
    """A database set up by an earlier version has one fulltext index per label; setup() drops both
    (every commit would keep refreshing them) and keyword search uses text_fulltext."""
    raw_driver.execute_query("CREATE FULLTEXT INDEX entity_name IF NOT EXISTS FOR (n:Entity) ON EACH [n.name, n.scope]")
    raw_driver.execute_query("CREATE FULLTEXT INDEX memory_text IF NOT EXISTS FOR (m:Memory) ON EACH [m.text, m.scope]")
    store.setup()
    records, _, _ = raw_driver.execute_query("SHOW INDEXES YIELD name, type WHERE type = 'FULLTEXT' RETURN name")
    names = {r["name"] for r in records}
    assert "text_fulltext" in names and not names & {"entity_name", "memory_text"}


def _scope_locks(raw_driver, scope: Scope) -> int:
    records, _, _ = raw_driver.execute_query("MATCH (l:ScopeLock) WHERE l.scope = $scope RETURN count(l) AS n", scope=scope.key)
    return int(records[0]["n"])


@pytest.mark.neo4j
def test_an_add_reads_and_writes_in_its_lock_transaction_and_commits_there(store, raw_driver, scope):
    """Under locked_conversation, resolve and write run in the lock's transaction: the write is
    committed by write() (visible to others before the block ends), the lock's node it created is
    never stored, and an add that writes nothing just ends the transaction."""
    e = ent("Alice", axis(0))
    with store.locked_conversation(scope, 10) as log:
        assert log.last_seq == 0
        assert store.resolve(scope, [EntityCandidate("alice", axis(0))], 0.7, [], 5, 20).matches == [None]
        store.write(GraphWrite("a1", scope, T0, [e], messages=[LoggedMessage("user", "hi", T0)]))
        assert [x.name for x in Neo4jStore(url=store.url, embedding_dims=TEST_DIMS).entities(scope)] == ["Alice"]
        assert _scope_locks(raw_driver, scope) == 0
    with store.locked_conversation(scope, 10) as log:  # the next add reads what the first committed
        assert log.last_seq == 1
        assert store.resolve(scope, [EntityCandidate("alice", axis(0))], 0.7, [], 5, 20).matches[0].name == "Alice"
    assert _scope_locks(raw_driver, scope) == 0
    with pytest.raises(InvalidInputError), store.locked_conversation(scope, 10):  # a refused write: nothing stored
        store.write(GraphWrite("a2", scope, T0, [ent("Bob", axis(1))], [RelationWrite("nobody", "KNOWS", e.id, T0)]))
    assert [x.name for x in store.entities(scope)] == ["Alice"] and _scope_locks(raw_driver, scope) == 0
    store.delete_all(scope)


@pytest.mark.neo4j
def test_a_locked_write_that_fails_transiently_is_written_again_whole(store, raw_driver, scope, caplog, monkeypatch):
    """A transient failure of the write in the lock's transaction (a deadlock or a lock timeout: the
    server's own error, injected once here because a real deadlock picks its victim by timing) rolls
    that transaction back; the add writes again in a managed transaction that takes the scope's lock
    first: the write lands once, whole, and the lock's node is not stored."""
    from neo4j.exceptions import TransientError

    store.write(GraphWrite("a0", scope, T0, messages=[LoggedMessage("user", "first", T0)]))
    real_run, failed = Neo4jStore._run, []

    def failing_once(self, tx, stmt):
        if stmt.name == "write_graph" and not failed:
            failed.append(stmt.params["unlock"])
            real_run(self, tx, stmt)  # really sent: the transaction holds its locks and changes
            raise TransientError._hydrate_neo4j(code="Neo.TransientError.Transaction.DeadlockDetected", message="injected")
        return real_run(self, tx, stmt)

    monkeypatch.setattr(Neo4jStore, "_run", failing_once)
    caplog.set_level(logging.INFO, logger="graphmem.stores.neo4j.store")
    with store.locked_conversation(scope, 10):
        store.write(GraphWrite("a1", scope, T0, [ent("Alice", axis(0))], messages=[LoggedMessage("user", "second", T0)]))
    assert failed == [True] and "failed transiently" in caplog.text
    log = store.conversation(scope, 10)
    assert [m.content for m in log.messages] == ["first", "second"] and log.last_seq == 2
    assert [x.name for x in store.entities(scope)] == ["Alice"] and _scope_locks(raw_driver, scope) == 0
    store.delete_all(scope)
