"""Issue 10, correctness and safety: exact scope ids, the graph LLM, empty partitioned scopes, caps on
one model answer, and errors that used to escape as driver or Python exceptions."""

from __future__ import annotations

import unicodedata

import pytest
from conftest import TEST_DIMS
from helpers import MALFORMED_GRAPH, graph, llm_config, make_memory, script

from graphmem import InvalidInputError, Memory
from graphmem.embeddings import HashingEmbedder
from graphmem.testing import ScriptedLLMServer
from graphmem.types import Scope


@pytest.fixture
def memory(server, store):
    m = make_memory(server, store, TEST_DIMS)
    yield m
    m.close()


# --- 1. scope ids are matched exactly as given, or refused -----------------------------------------

REFUSED_IDS = [
    "alice\u200b",  # zero-width space
    " alice ",  # surrounding whitespace
    "alice\n",
    "al\u00adice",  # soft hyphen
    "\ufeffalice",  # byte-order mark
    "ali\x00ce",  # NUL
    "ali\u202ece",  # bidi override
    "alice\ud800",  # lone surrogate
]


@pytest.mark.parametrize("bad", REFUSED_IDS)
@pytest.mark.parametrize("key", ["user_id", "agent_id", "run_id"])
def test_scope_ids_with_invisible_characters_are_refused_not_rewritten(bad, key):
    with pytest.raises(InvalidInputError, match=key):
        Scope.of(**{key: bad})


def test_every_scoped_method_refuses_such_ids_before_any_work(memory, server, uid):
    alice = f"alice-{uid}"
    memory.add("I like tea", user_id=alice, infer=False)
    for bad in REFUSED_IDS:
        evil = bad.replace("alice", alice)
        for method, args in (("add", ("I like coffee",)), ("search", ("tea",)), ("get_all", ()), ("delete_all", ()), ("timeline", ("I",))):
            with pytest.raises(InvalidInputError, match="user_id"):
                getattr(memory, method)(*args, user_id=evil)
    assert server.calls() == 0
    assert [m["memory"] for m in memory.get_all(user_id=alice)["results"]] == ["I like tea"]


def test_nfc_and_nfd_ids_are_two_scopes(memory, uid):
    nfc = unicodedata.normalize("NFC", f"José-{uid}")
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfc != nfd
    memory.add("composed", user_id=nfc, infer=False)
    memory.add("decomposed", user_id=nfd, infer=False)
    assert [m["memory"] for m in memory.get_all(user_id=nfc)["results"]] == ["composed"]
    assert [m["memory"] for m in memory.get_all(user_id=nfd)["results"]] == ["decomposed"]
    assert {m["user_id"] for m in memory.search("composed decomposed", user_id=nfc)["results"]} == {nfc}
    assert memory.get_all(user_id=nfd)["results"][0]["user_id"] == nfd  # stored as given
    memory.delete_all(user_id=nfd)
    assert [m["memory"] for m in memory.get_all(user_id=nfc)["results"]] == ["composed"]
    assert memory.get_all(user_id=nfd)["results"] == []


def test_ids_inner_spaces_and_any_script_are_kept_exactly(memory, uid):
    for given in (f"Ann Lee {uid}", f"東京-{uid}", f"ﬁle-{uid}"):  # the ligature is not NFKC-folded
        memory.add("hello", user_id=given, infer=False)
        assert memory.get_all(user_id=given)["results"][0]["user_id"] == given
    assert memory.get_all(user_id=f"file-{uid}")["results"] == []


# --- 3. graph_store.llm drives the graph stages only -----------------------------------------------


def test_graph_store_llm_is_used_for_the_graph_stages_only(server, store, uid):
    with ScriptedLLMServer() as graph_server:
        config = {
            "llm": llm_config(server),
            "graph_store": {"llm": llm_config(graph_server)},
            "context": {"summary_every": 1},
            "similar_memory_threshold": 0.0,
        }
        with Memory(config, store=store, embedder=HashingEmbedder(dims=TEST_DIMS)) as memory:
            script(graph_server, graph([("Boston", "place")], [("I", "lives_in", "Boston")]))
            server.enqueue("extract_facts", {"facts": ["Lives in Boston"]})
            server.enqueue("summarize", {"summary": "lives in Boston"})
            memory.add("I live in Boston", user_id=uid)
            memory.flush()
            script(graph_server, graph([("Denver", "place")], [("I", "lives_in", "Denver")], deletions=[("I", "lives_in", "Boston")]))
            server.enqueue("extract_facts", {"facts": ["Lives in Denver"]})
            server.enqueue("update_memory", {"memory": [{"id": "0", "text": "Lives in Denver", "event": "UPDATE"}]})
            server.enqueue("summarize", {"summary": "lives in Denver"})
            memory.add("I moved to Denver", user_id=uid)
            memory.flush()
        graph_tools = {r.tool for r in graph_server.requests}
        main_tools = {r.tool for r in server.requests}
    assert graph_tools == {"extract_entities", "delete_graph_memory"}  # entities and relations: one request
    assert main_tools == {"extract_facts", "update_memory", "summarize"}
    assert all("establish_relationships" in r.tools for r in graph_server.requests if r.tool == "extract_entities")


def test_without_graph_store_llm_every_stage_uses_llm(server, store, uid):
    with Memory({"llm": llm_config(server)}, store=store, embedder=HashingEmbedder(dims=TEST_DIMS)) as memory:
        assert memory.graph_llm is memory.llm


# --- 4. an empty partitioned scope divides by nothing ----------------------------------------------


def test_search_on_an_empty_partitioned_scope_finds_nothing(neo4j_uri, uid):
    from graphmem.stores.neo4j import Neo4jStore
    from graphmem.stores.neo4j.values import VectorPlan
    from graphmem.types import EntityWrite, GraphWrite, canonical_name, new_id, utcnow

    plan = VectorPlan(scan_limit=2, partition_size=3)
    scope = Scope.of(user_id=uid)
    with Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS, vector_plan=plan) as store:
        store.setup()
        embedder = HashingEmbedder(dims=TEST_DIMS)
        names = [f"thing {i}" for i in range(5)]
        entities = [EntityWrite(new_id(), n, canonical_name(n), "thing", v, True) for n, v in zip(names, embedder.embed(names), strict=True)]
        store.write(GraphWrite(new_id(), scope, utcnow(), entities=entities))  # partitioned, no memory
        memory = Memory({"llm": {"provider": "openai_compatible", "config": {"base_url": "http://127.0.0.1:9", "model": "x"}}}, store=store, embedder=embedder)
        try:
            assert memory.search("thing 1", user_id=uid, limit=5)["results"] == []
            assert memory.search("thing 1", user_id=uid, limit=5)["relations"] == []
            assert memory.get_all(user_id=uid)["results"] == []
        finally:
            memory.delete_all(user_id=uid)
            memory.close()


# --- 5 and 8. one model answer is capped; malformed and excess items are counted and logged ---------


@pytest.fixture
def embedded_memory(server, tmp_path):
    from graphmem.stores.embedded import EmbeddedStore

    store = EmbeddedStore(path=tmp_path / "graph", embedding_dims=TEST_DIMS)
    m = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "history.db"))
    yield m
    m.close()


def test_malformed_model_items_are_counted_logged_and_returned(memory, server, uid, caplog):
    script(server, MALFORMED_GRAPH)
    server.enqueue("extract_facts", {"facts": ["Knows Kim", 7, ""]})
    with caplog.at_level("WARNING", logger="graphmem"):
        result = memory.add("I know Kim", user_id=uid)
    assert result["dropped"] == {"entities": 3, "facts": 2, "relations": 3}
    assert any("dropped" in r.getMessage() and "relations" in r.getMessage() for r in caplog.records)
    assert len(result["relations"]) == 1 and [r["memory"] for r in result["results"]] == ["Knows Kim"]


def test_a_clean_answer_reports_nothing_dropped(memory, server, uid):
    script(server, graph([("Kim", "person")], [("I", "knows", "Kim")]))
    assert "dropped" not in memory.add("I know Kim", user_id=uid)


def test_one_huge_answer_is_capped_and_the_excess_counted(embedded_memory, server, uid):
    from graphmem.stages.facts import MAX_FACTS_PER_ADD
    from graphmem.stages.graph_extraction import MAX_ENTITIES_PER_ADD, MAX_RELATIONS_PER_ADD

    entities = [{"entity": f"e{i}", "entity_type": "thing"} for i in range(MAX_ENTITIES_PER_ADD + 100)]
    relations = [{"source": "I", "relationship": f"r{j}", "destination": f"e{j % 150}"} for j in range(10_000)]
    relations += relations[:50]  # repeats are merged, not counted
    facts = [f"fact number {i}" for i in range(MAX_FACTS_PER_ADD + 50)]
    server.enqueue("extract_entities", {"entities": entities})
    server.enqueue("establish_relationships", {"relations": relations})
    server.enqueue("extract_facts", {"facts": facts + facts[:10]})
    result = embedded_memory.add("a very long story", user_id=uid)
    # the user's own node counts among the entities
    assert result["dropped"] == {"entities": 101, "facts": 50, "relations": 10_000 - MAX_RELATIONS_PER_ADD}
    assert len(result["relations"]) == MAX_RELATIONS_PER_ADD
    assert len(result["results"]) == MAX_FACTS_PER_ADD
    stored = embedded_memory.store.entities(Scope.of(user_id=uid))
    assert len(stored) == MAX_ENTITIES_PER_ADD


# --- 6. the history log never decides an add's outcome; delete follows the same protocol ----------


@pytest.fixture
def audited(server, store, tmp_path, monkeypatch):
    """A Memory whose history waits at most 0.2 s for a lock, and a second connection to lock it."""
    import sqlite3

    from graphmem.lifecycle import history

    monkeypatch.setattr(history, "LOCK_TIMEOUT", 0.2)
    path = tmp_path / "history.db"
    m = make_memory(server, store, TEST_DIMS, history_db_path=str(path))
    other = sqlite3.connect(str(path), isolation_level=None)
    yield m, other
    if other.in_transaction:
        other.execute("ROLLBACK")
    other.close()
    m.close()


def _lock_right_after(memory, method, other, monkeypatch):
    """The store change happens for real; right after it another process locks the history."""
    real = getattr(memory.store, method)

    def then_lock(*args):
        result = real(*args)
        other.execute("BEGIN IMMEDIATE")
        return result

    monkeypatch.setattr(memory.store, method, then_lock)


def test_a_locked_history_after_the_write_does_not_fail_the_add(audited, uid, monkeypatch):
    memory, other = audited
    _lock_right_after(memory, "write", other, monkeypatch)
    result = memory.add("I like tea", user_id=uid, infer=False)
    (added,) = result["results"]
    assert [m["memory"] for m in memory.get_all(user_id=uid)["results"]] == ["I like tea"]
    other.execute("ROLLBACK")
    assert [h["event"] for h in memory.history(added["id"])] == ["ADD"]  # committed on the next use


def test_delete_stages_first_so_a_locked_history_deletes_nothing(audited, uid):
    from graphmem import StoreError

    memory, other = audited
    (added,) = memory.add("I like tea", user_id=uid, infer=False)["results"]
    other.execute("BEGIN IMMEDIATE")
    with pytest.raises(StoreError, match="locked"):
        memory.delete(added["id"])
    with pytest.raises(StoreError, match="locked"):
        memory.add("I like coffee", user_id=uid, infer=False)
    other.execute("ROLLBACK")
    assert [m["memory"] for m in memory.get_all(user_id=uid)["results"]] == ["I like tea"]
    assert [h["event"] for h in memory.history(added["id"])] == ["ADD"]


def test_a_locked_history_after_a_delete_does_not_fail_it(audited, uid, monkeypatch):
    memory, other = audited
    (added,) = memory.add("I like tea", user_id=uid, infer=False)["results"]
    _lock_right_after(memory, "delete_memory", other, monkeypatch)
    memory.delete(added["id"])
    assert memory.get(added["id"]) is None
    other.execute("ROLLBACK")
    assert [h["event"] for h in memory.history(added["id"])] == ["ADD", "DELETE"]


def test_repair_keeps_a_staged_delete_the_store_carried_out(tmp_path):
    from graphmem.lifecycle.history import History, HistoryEvent

    log = History(tmp_path / "h.db")
    scope = Scope.of(user_id="u")
    log.stage("a1", scope, [HistoryEvent("m1", "DELETE", "old", None)])  # deleted for good: gone
    log.stage("a2", scope, [HistoryEvent("m2", "DELETE", "old", None)])  # the delete never happened
    from graphmem.types import MemoryItem

    alive = MemoryItem(id="m2", text="old", hash="h")
    assert log.repair(lambda memory_id: alive if memory_id == "m2" else None) == 1
    assert [h["event"] for h in log.history("m1")] == ["DELETE"] and log.history("m2") == []
    log.close()


# --- 7. errors that used to escape -----------------------------------------------------------------

EDGE_DATES = ["0001-01-01T00:00:00+01:00", "9999-12-31T23:59:59-01:00"]


@pytest.mark.parametrize("when", EDGE_DATES)
def test_dates_at_the_edge_of_the_range_are_clear_errors(memory, server, uid, when):
    with pytest.raises(InvalidInputError, match="timestamp"):
        memory.add("hi", user_id=uid, timestamp=when)
    with pytest.raises(InvalidInputError, match="as_of"):
        memory.search("hi", user_id=uid, as_of=when)
    with pytest.raises(InvalidInputError, match="known_at"):
        memory.search("hi", user_id=uid, known_at=when)
    assert server.calls() == 0


def test_the_extreme_valid_dates_work_end_to_end(memory, server, uid):
    script(server, graph([("Rome", "place")], [("I", "visited", "Rome")]))
    memory.add("I visited Rome", user_id=uid, timestamp="0001-01-01T00:00:00Z")
    for when in ("0001-01-01T00:00:00Z", "9999-12-31T23:59:59Z"):
        found = memory.search("Rome", user_id=uid, as_of=when, known_at=when)
        assert isinstance(found["relations"], list)


def test_model_dates_at_the_edge_are_unknown_not_a_crash(memory, server, uid):
    script(server, graph([("Rome", "place")], [("I", "visited", "Rome", EDGE_DATES[0], EDGE_DATES[1])]))
    result = memory.add("I visited Rome", user_id=uid, timestamp="2024-05-01T10:00:00Z")
    (rel,) = result["relations"]
    assert rel["valid_at"] == "2024-05-01T10:00:00Z" and rel["invalid_at"] is None


def test_limit_is_bounded_on_every_store(memory, uid):
    from graphmem.schema.limits import RESULT_LIMIT as MAX_LIMIT

    memory.add("I like tea", user_id=uid, infer=False)
    assert memory.search("tea", user_id=uid, limit=MAX_LIMIT)["results"]
    assert memory.get_all(user_id=uid, limit=MAX_LIMIT)["results"]
    for huge in (MAX_LIMIT + 1, 2**62, 10**30):
        with pytest.raises(InvalidInputError, match="limit"):
            memory.search("tea", user_id=uid, limit=huge)
        with pytest.raises(InvalidInputError, match="limit"):
            memory.get_all(user_id=uid, limit=huge)


def test_lone_surrogates_are_refused_alike_by_both_stores(memory, uid):
    (added,) = memory.add("I like tea", user_id=uid, infer=False)["results"]
    for call in (
        lambda: memory.add("hi", user_id=uid, infer=False, metadata={"k": "bad\ud800"}),
        lambda: memory.add("hi", user_id=uid, infer=False, metadata={"bad\udfff": 1}),
        lambda: memory.search("tea\ud800", user_id=uid),
        lambda: memory.search("tea", user_id=uid, filters={"k": "\ud800"}),
        lambda: memory.update(added["id"], "coffee\ud800"),
        lambda: memory.get("\ud800"),
        lambda: memory.history("\ud800"),
        lambda: memory.timeline("\ud800", user_id=uid),
    ):
        with pytest.raises(InvalidInputError, match="surrogate"):
            call()
    assert [m["memory"] for m in memory.get_all(user_id=uid)["results"]] == ["I like tea"]


@pytest.mark.parametrize("threshold", ["0.5", True, float("nan"), [0.5]])
def test_threshold_must_be_a_number(memory, uid, threshold):
    with pytest.raises(InvalidInputError, match="threshold"):
        memory.search("tea", user_id=uid, threshold=threshold)


def test_a_closed_memory_says_so(server, store, uid):
    from graphmem import ClosedError

    memory = make_memory(server, store, TEST_DIMS)
    memory.close()
    memory.close()  # twice is fine
    for call in (
        lambda: memory.add("hi", user_id=uid),
        lambda: memory.search("hi", user_id=uid),
        lambda: memory.get_all(user_id=uid),
        lambda: memory.get("x"),
        lambda: memory.history("x"),
        lambda: memory.delete_all(user_id=uid),
        lambda: memory.reset(),
    ):
        with pytest.raises(ClosedError, match="close"):
            call()


@pytest.mark.parametrize("where", ["dir", "under_file"])
def test_an_unwritable_history_path_is_a_config_error_at_start(server, tmp_path, where):
    from graphmem import ConfigError

    blocker = tmp_path / "blocker"
    blocker.write_text("a file, not a folder")
    path = tmp_path if where == "dir" else blocker / "history.db"
    config = {"llm": llm_config(server), "history_db_path": str(path), "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "g")}}}
    with pytest.raises(ConfigError, match="history_db_path"):
        Memory(config, embedder=HashingEmbedder(dims=TEST_DIMS))


def test_a_history_locked_at_start_is_a_graphmem_error(server, tmp_path, monkeypatch):
    import sqlite3

    from graphmem import StoreError
    from graphmem.lifecycle import history

    monkeypatch.setattr(history, "LOCK_TIMEOUT", 0.2)
    path = tmp_path / "history.db"
    history.History(path).close()
    other = sqlite3.connect(str(path), isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    config = {"llm": llm_config(server), "history_db_path": str(path), "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "g")}}}
    try:
        with pytest.raises(StoreError, match="locked"):
            Memory(config, embedder=HashingEmbedder(dims=TEST_DIMS))
    finally:
        other.execute("ROLLBACK")
        other.close()


def test_an_unreachable_neo4j_fails_at_once_naming_the_url(server, tmp_path, caplog):
    import socket

    from graphmem import StoreUnavailableError

    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"bolt://127.0.0.1:{port}"
    config = {"llm": llm_config(server), "history_db_path": str(tmp_path / "h.db"), "graph_store": {"provider": "neo4j", "config": {"url": url}}}
    with caplog.at_level("INFO"), pytest.raises(StoreUnavailableError, match=url):
        Memory(config, embedder=HashingEmbedder(dims=TEST_DIMS))
    assert not [r for r in caplog.records if "retr" in r.getMessage().lower()], "no driver retries"


# --- 2. the demo writes where it is told and deletes nothing --------------------------------------


def test_demo_uses_the_configured_neo4j_and_touches_no_one_elses_data(neo4j_uri, tmp_path, monkeypatch, uid):
    import re

    from graphmem.cli.demo import run_demo
    from graphmem.stores.neo4j import Neo4jStore

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("GRAPHMEM_LLM_BASE_URL", raising=False)
    config = {
        "graph_store": {"provider": "neo4j", "config": {"url": neo4j_uri}},
        "embedder": {"provider": "hashing", "config": {"dims": TEST_DIMS}},
        "history_db_path": str(tmp_path / "history.db"),
    }
    lines: list[str] = []
    existing = Memory({**config, "llm": {"provider": "openai_compatible", "config": {"base_url": "http://127.0.0.1:9", "model": "x"}}})
    try:
        existing.add("I keep this", user_id="user_1", infer=False)  # someone's data under the demo's old id
        before = existing.get_all(user_id="user_1")["results"]
        assert run_demo(config, out=lines.append, store="neo4j") == 0
        output = "\n".join(lines)
        assert f"Store: neo4j ({neo4j_uri})" in output
        (demo_user,) = re.findall(r"user_id='([^']+)'", output)
        assert demo_user != "user_1"
        assert existing.get_all(user_id="user_1")["results"] == before
        with Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS) as store:
            names = {r.destination for r in store.get_all(Scope.of(user_id=demo_user), include_invalidated=True)}
        assert {"Jesica", "dog", "badminton"} <= names
        assert "(Jesica) -[HAS_PET]-> (dog)" in output and "[invalidated" in output
    finally:
        existing.delete_all(user_id="user_1")
        if "demo_user" in locals():
            existing.delete_all(user_id=demo_user)
        existing.close()
