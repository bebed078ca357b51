"""Issue 10, correctness and safety: exact scope ids, the graph LLM, empty partitioned scopes, caps on
one model answer, and errors that used to escape as driver or Python exceptions."""

from __future__ import annotations

import unicodedata
import uuid

import pytest

from conftest import TEST_DIMS
from graphmem import InvalidInputError, Memory
from graphmem.embeddings import HashingEmbedder
from graphmem.testing import ScriptedLLMServer
from graphmem.types import Scope
from helpers import graph, llm_config, make_memory, script


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
        for call in (
            lambda: memory.add("I like coffee", user_id=evil),
            lambda: memory.search("tea", user_id=evil),
            lambda: memory.get_all(user_id=evil),
            lambda: memory.delete_all(user_id=evil),
            lambda: memory.timeline("I", user_id=evil),
        ):
            with pytest.raises(InvalidInputError, match="user_id"):
                call()
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
        entities = [EntityWrite(new_id(), n, canonical_name(n), "thing", v, True) for n, v in zip(names, embedder.embed(names))]
        store.write(GraphWrite(new_id(), scope, utcnow(), entities=entities))  # partitioned, no memory
        memory = Memory({"llm": {"provider": "openai_compatible", "config": {"base_url": "http://127.0.0.1:9", "model": "x"}}}, store=store, embedder=embedder)
        try:
            assert memory.search("thing 1", user_id=uid, limit=5)["results"] == []
            assert memory.search("thing 1", user_id=uid, limit=5)["relations"] == []
            assert memory.get_all(user_id=uid)["results"] == []
        finally:
            memory.delete_all(user_id=uid)
            memory.close()
