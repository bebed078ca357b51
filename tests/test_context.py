"""Conversation context for extraction: recent messages, rolling summary, per-scope isolation."""

from __future__ import annotations

import uuid

import networkx as nx
from conftest import TEST_DIMS
from helpers import graph, lock_round_trips, make_memory, script, triples


def _memory(server, store, tmp_path, **context):
    return make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "h.db"), context=context)


def _prompt_of(server, tool: str, newest: str) -> str:
    for req in server.requests:
        prompt = req.messages[-1]["content"]
        if tool in (req.tools or (req.tool,)) and prompt.rstrip().endswith(newest):
            return prompt
    raise AssertionError(f"no {tool} request for {newest!r}")


def test_desmond_one_message_per_add_resolves_references(server, store, tmp_path, uid):
    memory = _memory(server, store, tmp_path, summary_every=0)
    seen_context: dict[str, str] = {}

    def handler(tool, body):
        prompt = body["messages"][-1]["content"]
        newest = prompt.rsplit("Newest messages:", 1)[-1]
        context = prompt.rsplit("Newest messages:", 1)[0]
        seen_context[newest.strip()] = context
        # a model that reads the context: "her" is the sister from the earlier message
        replies = {
            "Hi, my name is Desmond.": graph([("Desmond", "person")], [("I", "has_name", "Desmond")]),
            "I have a sister.": graph([], []),
            "Her name is Jesica.": graph([("Jesica", "person")], [("I", "has_sister", "Jesica")]) if "I have a sister." in context else graph([], []),
            "She has a dog.": graph([("Jesica", "person"), ("dog", "pet")], [("Jesica", "has_pet", "dog")]) if "Her name is Jesica." in context else graph([], []),
        }
        for text, reply in replies.items():
            if newest.strip().endswith(text):
                return reply.get(tool)
        return None

    server.set_handler(handler)
    for text in ("Hi, my name is Desmond.", "I have a sister.", "Her name is Jesica.", "She has a dog."):
        memory.add(text, user_id=uid)
    assert "I have a sister." in _prompt_of(server, "extract_entities", "user: Her name is Jesica.")
    assert "I have a sister." in _prompt_of(server, "extract_facts", "user: Her name is Jesica.")
    got = triples(memory.get_all(user_id=uid))
    assert {(uid, "HAS_SISTER", "Jesica"), ("Jesica", "HAS_PET", "dog")} <= got
    g = nx.Graph((s, d) for s, _, d in got)
    assert nx.is_connected(g)


def test_context_is_bounded_and_disabled_by_zero(server, store, tmp_path, uid):
    memory = _memory(server, store, tmp_path, recent_messages=3, summary_every=0)
    for i in range(8):
        memory.add(f"message number {i} " + "x" * 5000, user_id=uid)
    prompt = _prompt_of(server, "extract_facts", "x" * 100)
    last = server.requests[-1].messages[-1]["content"]
    assert "message number 6" in last and "message number 4" in last and "message number 3" not in last
    assert len(last) < 5000 + 3 * 1100 + 500  # newest message + 3 cut context messages + frame
    off = _memory(server, store, tmp_path, recent_messages=0, summary_every=0)
    before = off.store.round_trips
    off.add("no context please", user_id=uid)
    assert "Earlier messages" not in server.requests[-1].messages[-1]["content"]
    assert off.store.round_trips - before == 1 + lock_round_trips(store)  # no log read: just the write (and the lock)
    assert prompt


def test_context_never_crosses_scopes(server, store, tmp_path):
    memory = _memory(server, store, tmp_path, summary_every=0)
    a, b = f"a-{uuid.uuid4().hex[:6]}", f"b-{uuid.uuid4().hex[:6]}"
    memory.add("My secret project is called Falcon", user_id=a)
    memory.add("I like tea", user_id=b)
    assert "Falcon" not in server.requests[-1].messages[-1]["content"]
    memory.add("I like coffee", user_id=b, run_id="r1")
    assert "Falcon" not in server.requests[-1].messages[-1]["content"]
    memory.add("I like coffee", user_id=a, run_id="r1")  # a user's runs share the user's conversation
    assert "Falcon" in server.requests[-1].messages[-1]["content"]


def test_summary_every_k_adds_in_the_background(server, store, tmp_path, uid):
    memory = _memory(server, store, tmp_path, summary_every=2)
    server.enqueue("summarize", {"summary": "Desmond has a sister named Jesica."})
    memory.add("Hi, my name is Desmond.", user_id=uid)
    memory.flush()
    assert server.calls("summarize") == 0 and memory.get_summary(user_id=uid) is None
    memory.add("My sister is Jesica.", user_id=uid)
    memory.flush()
    assert server.calls("summarize") == 1
    assert memory.get_summary(user_id=uid) == "Desmond has a sister named Jesica."
    request = [r for r in server.requests if r.tool == "summarize"][0].messages[-1]["content"]
    assert "Hi, my name is Desmond." in request and "My sister is Jesica." in request
    memory.add("She has a dog.", user_id=uid)
    last = server.requests[-1].messages[-1]["content"]
    assert "Desmond has a sister named Jesica." in last  # the summary rides along as context


def test_a_lost_summary_is_redone_after_restart(server, store, tmp_path, uid):
    memory = _memory(server, store, tmp_path, summary_every=2)
    server.inject("server_error", times=20, tool="summarize")
    memory.add("I moved to Oslo.", user_id=uid)
    memory.add("I work at a bakery.", user_id=uid)
    memory.flush()
    assert memory.get_summary(user_id=uid) is None  # the background run failed
    server.reset()
    restarted = _memory(server, store, tmp_path, summary_every=2)  # a new Memory on the same store
    server.enqueue("summarize", {"summary": "Lives in Oslo, works at a bakery, likes skiing."})
    restarted.add("I like skiing.", user_id=uid)
    restarted.flush()
    assert restarted.get_summary(user_id=uid) == "Lives in Oslo, works at a bakery, likes skiing."
    request = [r for r in server.requests if r.tool == "summarize"][0].messages[-1]["content"]
    assert "I moved to Oslo." in request and "I like skiing." in request


def test_summarize_on_demand(server, store, tmp_path, uid):
    memory = _memory(server, store, tmp_path, summary_every=0)
    memory.add("I play the cello.", user_id=uid)
    server.enqueue("summarize", {"summary": "Plays the cello."})
    assert memory.summarize(user_id=uid) == {"summary": "Plays the cello."}
    assert memory.get_summary(user_id=uid) == "Plays the cello."
    assert memory.get_summary(user_id="someone-else") is None


def test_the_invalidation_stage_sees_the_context_too(server, store, tmp_path, uid):
    memory = _memory(server, store, tmp_path, summary_every=0)
    script(server, graph([("Boston", "place")], [("I", "lives_in", "Boston")]))
    memory.add("I live in Boston.", user_id=uid)
    script(server, graph([("Boston", "place")], [], deletions=[]))
    memory.add("Not any more.", user_id=uid)
    request = [r for r in server.requests if r.tool == "delete_graph_memory"][-1].messages[-1]["content"]
    assert "I live in Boston." in request.split("Newest messages:")[0]
