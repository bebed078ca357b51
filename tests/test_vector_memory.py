"""Fact memory, the update stage, history and infer=False, on every store (scripted LLM over HTTP)."""

from __future__ import annotations

import uuid

import pytest
from conftest import TEST_DIMS
from helpers import make_memory

from graphmem import InvalidInputError, LLMUnavailableError, NotFoundError


@pytest.fixture
def memory(server, store, tmp_path):
    # the hashing embedder is lexical; with threshold 0 every memory of the scope counts as similar
    return make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "history.db"), similar_memory_threshold=0.0)


def _texts(result: dict) -> list[str]:
    return [r["memory"] for r in result["results"]]


def test_update_semantics_add_update_delete(memory, server, uid):
    server.enqueue("extract_facts", {"facts": ["Likes cheese pizza"]})
    first = memory.add("I like cheese pizza", user_id=uid)
    assert [r["event"] for r in first["results"]] == ["ADD"]
    mem_id = first["results"][0]["id"]
    assert server.calls("update_memory") == 0  # nothing similar existed: added directly

    server.enqueue("extract_facts", {"facts": ["Loves chicken pizza"]})
    server.enqueue("update_memory", {"memory": [{"id": "0", "text": "Loves cheese and chicken pizza", "event": "UPDATE", "old_memory": "Likes cheese pizza"}]})
    second = memory.add("I love chicken pizza", user_id=uid)
    assert second["results"] == [{"id": mem_id, "memory": "Loves cheese and chicken pizza", "event": "UPDATE", "previous_memory": "Likes cheese pizza"}]
    shown = server.requests[-1].messages[-1]["content"]
    assert mem_id not in shown and '"id": "0"' in shown  # short ids, never UUIDs

    server.enqueue("extract_facts", {"facts": ["Does not like cheese pizza any more"]})
    server.enqueue("update_memory", {"memory": [{"id": "0", "text": "Loves cheese and chicken pizza", "event": "DELETE"}]})
    memory.add("I don't like cheese pizza any more", user_id=uid)

    events = memory.history(mem_id)
    assert [(e["event"], e["old_memory"], e["new_memory"]) for e in events] == [
        ("ADD", None, "Likes cheese pizza"),
        ("UPDATE", "Likes cheese pizza", "Loves cheese and chicken pizza"),
        ("DELETE", "Loves cheese and chicken pizza", None),
    ]
    assert events[-1]["is_deleted"] is True and events[0]["user_id"] == uid
    assert memory.get(mem_id) is None
    assert mem_id not in {r["id"] for r in memory.search("cheese pizza", user_id=uid)["results"]}
    kept = memory.get_all(user_id=uid, include_invalidated=True)["results"]
    assert mem_id in {r["id"] for r in kept}  # soft-deleted: kept for history


def test_hallucinated_ids_are_ignored(memory, server, uid):
    server.enqueue("extract_facts", {"facts": ["Plays chess"]})
    memory.add("I play chess", user_id=uid)
    server.enqueue("extract_facts", {"facts": ["Plays chess on Sundays"]})
    server.enqueue("update_memory", {"memory": [
        {"id": "7", "text": "x", "event": "DELETE"},
        {"id": "abc", "text": "y", "event": "UPDATE"},
        {"id": "9", "text": "Plays chess on Sundays", "event": "ADD"},
    ]})
    memory.add("I play chess on Sundays", user_id=uid)
    assert sorted(_texts(memory.get_all(user_id=uid))) == ["Plays chess", "Plays chess on Sundays"]


def test_duplicate_huge_and_empty_facts(memory, server, uid):
    server.enqueue("extract_facts", {"facts": ["Owns a cat", "owns a cat", "", 5, "C" * 10_000]})
    result = memory.add("I own a cat", user_id=uid)
    texts = _texts(result)
    assert texts[0] == "Owns a cat" and len(texts) == 2 and len(texts[1]) == 1000
    server.enqueue("extract_facts", {"facts": []})
    assert memory.add("hello!", user_id=uid)["results"] == []


def test_same_text_in_two_scopes_stays_apart(memory, server):
    a, b = f"a-{uuid.uuid4().hex[:6]}", f"b-{uuid.uuid4().hex[:6]}"
    for user in (a, b):
        server.enqueue("extract_facts", {"facts": ["Allergic to peanuts"]})
        memory.add("I'm allergic to peanuts", user_id=user)
    assert server.calls("update_memory") == 0  # b's fact is not compared with a's
    ra, rb = memory.get_all(user_id=a)["results"], memory.get_all(user_id=b)["results"]
    assert len(ra) == len(rb) == 1 and ra[0]["id"] != rb[0]["id"]
    assert [r["id"] for r in memory.search("peanuts", user_id=a)["results"]] == [ra[0]["id"]]
    memory.delete_all(user_id=a)
    assert memory.get_all(user_id=a)["results"] == [] and len(memory.get_all(user_id=b)["results"]) == 1


def test_infer_false_round_trip_with_metadata_filters_limit(memory, server, uid):
    msgs = [{"role": "user", "content": "I prefer window seats"}, {"role": "assistant", "content": "Noted, window seats."}]
    result = memory.add(msgs, user_id=uid, infer=False, metadata={"session": 1, "topic": "travel"})
    assert server.calls() == 0
    assert _texts(result) == ["I prefer window seats", "Noted, window seats."]
    memory.add("I moved to Denver", user_id=uid, infer=False, metadata={"session": 2})
    items = memory.get_all(user_id=uid)["results"]
    assert {i["role"] for i in items} == {"user", "assistant"}
    assert items[0]["metadata"] == {"session": 1, "topic": "travel"}
    hits = memory.search("window seats", user_id=uid, filters={"session": 1})["results"]
    assert hits and all(h["metadata"]["session"] == 1 for h in hits)
    assert memory.search("window seats", user_id=uid, filters={"session": 3})["results"] == []
    assert len(memory.search("seats Denver", user_id=uid, limit=1)["results"]) == 1
    assert memory.search("window seats", user_id=uid, threshold=1.01)["results"] == []
    top = memory.search("window seats", user_id=uid)["results"][0]
    assert {"vector", "bm25", "fulltext"} <= set(top["scores"]) and top["score"] > 0


def test_get_update_delete_and_unknown_ids(memory, server, uid):
    (item,) = memory.add("I drink green tea", user_id=uid, infer=False)["results"]
    assert memory.get(item["id"])["memory"] == "I drink green tea"
    memory.update(item["id"], "Drinks green tea every morning")
    assert memory.get(item["id"])["memory"] == "Drinks green tea every morning"
    memory.delete(item["id"])
    assert memory.get(item["id"]) is None
    assert [e["event"] for e in memory.history(item["id"])] == ["ADD", "UPDATE", "DELETE"]
    with pytest.raises(NotFoundError):
        memory.update(str(uuid.uuid4()), "x")
    with pytest.raises(NotFoundError):
        memory.delete(str(uuid.uuid4()))


def test_unserialisable_metadata_fails_before_anything_is_written(memory, server, uid):
    with pytest.raises(InvalidInputError, match="metadata"):
        memory.add("I like jazz", user_id=uid, metadata={"when": object()})
    with pytest.raises(InvalidInputError, match="metadata"):
        memory.add("I like jazz", user_id=uid, metadata={1: "x"})
    assert server.calls() == 0 and memory.get_all(user_id=uid)["results"] == []


def test_graph_and_facts_commit_together(memory, server, uid):
    server.enqueue("extract_facts", {"facts": ["Lives in Boston"]})
    server.enqueue("extract_entities", {"entities": [{"entity": "Boston", "entity_type": "place"}]})
    server.enqueue("establish_relationships", {"relations": [{"source": "I", "relationship": "lives_in", "destination": "Boston"}]})
    result = memory.add("I live in Boston", user_id=uid)
    assert _texts(result) == ["Lives in Boston"] and len(result["relations"]) == 1
    # a failing stage after extraction: neither the fact nor the relation is written
    server.enqueue("extract_facts", {"facts": ["Lives in Boston now"]})
    server.enqueue("extract_entities", {"entities": [{"entity": "Boston", "entity_type": "place"}]})
    server.inject("server_error", times=10, tool="update_memory")
    with pytest.raises(LLMUnavailableError):
        memory.add("I live in Boston now", user_id=uid)
    assert _texts(memory.get_all(user_id=uid)) == ["Lives in Boston"]


def test_history_staged_rows_are_repaired_against_the_store(memory, uid):
    from graphmem.lifecycle.history import HistoryEvent
    from graphmem.types import Scope

    (item,) = memory.add("I swim", user_id=uid, infer=False)["results"]
    log = memory.history_log
    log.stage("ghost-add", Scope.of(user_id=uid), [HistoryEvent(item["id"], "UPDATE", "I swim", "never written")])
    log.stage("real-add", Scope.of(user_id=uid), [HistoryEvent(item["id"], "UPDATE", "x", "I swim")])
    assert log.repair(memory.store.get_memory) == 1
    assert [e["new_memory"] for e in memory.history(item["id"])] == ["I swim", "I swim"]


def test_only_similar_memories_send_a_fact_to_the_update_stage(server, store, tmp_path, uid):
    memory = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "h2.db"))  # default threshold 0.5
    server.enqueue("extract_facts", {"facts": ["Likes jazz music"]})
    memory.add("I like jazz", user_id=uid)
    server.enqueue("extract_facts", {"facts": ["Works as a pilot"]})
    memory.add("I work as a pilot", user_id=uid)
    assert server.calls("update_memory") == 0  # nothing similar: the fact is added directly
    server.enqueue("extract_facts", {"facts": ["Likes jazz music a lot"]})
    server.enqueue("update_memory", {"memory": [{"id": "0", "text": "Likes jazz music a lot", "event": "UPDATE"}]})
    memory.add("I really like jazz", user_id=uid)
    assert server.calls("update_memory") == 1
    assert sorted(_texts(memory.get_all(user_id=uid))) == ["Likes jazz music a lot", "Works as a pilot"]


def test_infer_false_never_calls_the_llm_even_when_a_summary_is_due(server, store, tmp_path, uid):
    memory = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "h3.db"), context={"summary_every": 1})
    for i in range(3):
        memory.add(f"message {i}", user_id=uid, infer=False)
    memory.flush()
    assert server.calls() == 0


def test_merged_texts_are_embedded_in_one_batch(memory, server, uid):
    memory.add(["Likes tea", "Likes chess"], user_id=uid, infer=False)
    server.enqueue("extract_facts", {"facts": ["Likes green tea", "Likes blitz chess"]})
    server.enqueue("update_memory", {"memory": [
        {"id": "0", "text": "Likes tea, green tea most", "event": "UPDATE"},
        {"id": "1", "text": "Likes chess, blitz most", "event": "UPDATE"},
    ]})
    before = memory.embedder.calls
    result = memory.add("I like green tea and blitz chess", user_id=uid)
    assert sorted(r["memory"] for r in result["results"]) == ["Likes chess, blitz most", "Likes tea, green tea most"]
    assert memory.embedder.calls - before == 2  # entities + facts in one batch, both merged texts in another
