"""Bad input gets a clear graphmem error and loses nothing (every add commits whole or not at all)."""

from __future__ import annotations

import uuid

import pytest
from conftest import TEST_DIMS
from helpers import MALFORMED_GRAPH, graph, make_memory, script, triples

from graphmem import InvalidInputError, LLMResponseError, LLMUnavailableError, MissingScopeError
from graphmem.types import MAX_NAME_CHARS, Scope


@pytest.fixture
def memory(server, store):
    return make_memory(server, store, TEST_DIMS)


def _seed(memory, server, uid):
    """One known relation, so 'untouched' can be checked against it."""
    script(server, graph([("Boston", "place")], [("I", "lives_in", "Boston")]))
    memory.add("I live in Boston", user_id=uid)
    return memory.get_all(user_id=uid, include_invalidated=True)


@pytest.mark.parametrize("method", ["add", "search", "get_all", "delete_all"])
def test_missing_scope_names_the_arguments(memory, method):
    args = {"add": ("hi",), "search": ("hi",)}.get(method, ())
    with pytest.raises(MissingScopeError, match="user_id"):
        getattr(memory, method)(*args)


@pytest.mark.parametrize("messages", ["", "   \n\t", [], [{"role": "user", "content": "  "}], [{"role": "user", "content": None}]])
def test_empty_messages_make_no_llm_call(memory, server, uid, messages):
    result = memory.add(messages, user_id=uid)
    assert result.pop("usage")["llm_requests"] == 0
    assert isinstance(result.pop("add_id"), str)  # an add with nothing to read has an id too (it names nothing)
    assert result == {"results": [], "relations": []}
    assert server.calls() == 0


def test_unknown_role_and_unusable_content_are_clear_errors(memory, server, uid):
    with pytest.raises(InvalidInputError, match="role"):
        memory.add([{"role": "wizard", "content": "hi"}], user_id=uid)
    with pytest.raises(InvalidInputError, match="content"):
        memory.add([{"role": "user", "content": {"nested": "dict"}}], user_id=uid)
    with pytest.raises(InvalidInputError):
        memory.add(42, user_id=uid)
    with pytest.raises(InvalidInputError, match="user_id"):
        memory.add("hi", user_id=123)
    assert server.calls() == 0


def test_content_parts_and_numbers_are_text(memory, server, uid):
    script(server, graph([("Rome", "place")], [("I", "visited", "Rome")]))
    memory.add([{"role": "user", "content": [{"type": "text", "text": "I visited Rome"}, {"type": "image_url", "image_url": {"url": "x"}}]}, {"role": "assistant", "content": 7}], user_id=uid)
    prompt = server.requests[-1].messages[-1]["content"]
    assert "user: I visited Rome" in prompt and "assistant: 7" in prompt


def test_huge_message_and_huge_names_are_cut_by_rule(memory, server, uid):
    long_name = "N" * 10_000
    script(server, graph([(long_name, "person")], [("I", "knows", long_name)]))
    memory.add("x" * 100_000, user_id=uid)
    sent = server.requests[-1].messages[-1]["content"]
    assert len(sent) < 21_000  # max_message_chars (20,000) plus the prompt frame
    (rel,) = memory.get_all(user_id=uid)["relations"]
    assert rel["destination"] == "N" * MAX_NAME_CHARS


def test_odd_unicode_round_trips(memory, server, uid):
    name = "Zoë 🐶 \u202eevil\u202c 東京"
    script(server, graph([(name, "pet")], [("I", "❤️ loves ✨", name)]))
    memory.add("I love Zoë 🐶 in 東京\x00\x07", user_id=uid)
    (rel,) = memory.get_all(user_id=uid)["relations"]
    assert rel["relationship"] == "LOVES"
    assert "東京" in rel["destination"] and "🐶" in rel["destination"]


def test_malformed_llm_output_is_retried_once(memory, server, uid):
    server.inject("malformed", tool="extract_entities")
    script(server, graph([("Oslo", "place")], [("I", "lives_in", "Oslo")]))
    memory.add("I live in Oslo", user_id=uid)
    assert triples(memory.get_all(user_id=uid)) == {(uid, "LIVES_IN", "Oslo")}


@pytest.mark.parametrize("fault", ["malformed", "unknown_tool", "no_tool_call"])
def test_persistently_unusable_output_fails_and_writes_nothing(memory, server, uid, fault):
    before = _seed(memory, server, uid)
    server.inject(fault, times=5)
    with pytest.raises(LLMResponseError):
        memory.add("I moved to Denver", user_id=uid)
    assert memory.get_all(user_id=uid, include_invalidated=True) == before


def test_not_json_body_is_a_graphmem_error(memory, server, uid):
    server.inject("bad_json_body", times=5)
    with pytest.raises((LLMResponseError, LLMUnavailableError)):
        memory.add("I moved to Denver", user_id=uid)


def test_transient_http_failures_are_retried(memory, server, uid):
    server.inject("rate_limit")
    server.inject("server_error")
    script(server, graph([("Lima", "place")], [("I", "lives_in", "Lima")]))
    memory.add("I live in Lima", user_id=uid)
    assert triples(memory.get_all(user_id=uid)) == {(uid, "LIVES_IN", "Lima")}


def test_retries_are_bounded_and_name_the_endpoint(memory, server, uid):
    server.inject("server_error", times=10)
    with pytest.raises(LLMUnavailableError, match="127.0.0.1"):
        memory.add("I live in Lima", user_id=uid)
    # max_retries=2 → 3 attempts per stage (graph extraction and facts run concurrently)
    assert server.calls("extract_entities") <= 3 and server.calls("extract_facts") <= 3


def test_timeouts_are_retried(server, store, uid):
    memory = make_memory(server, store, TEST_DIMS, llm={"provider": "openai_compatible", "config": {"base_url": server.base_url, "api_key": "k", "timeout": 0.5, "max_retries": 1, "retry_wait": 0.01}})
    server.inject("timeout", delay=2.0)
    script(server, graph([("Kyiv", "place")], [("I", "lives_in", "Kyiv")]))
    memory.add("I live in Kyiv", user_id=uid)
    assert triples(memory.get_all(user_id=uid)) == {(uid, "LIVES_IN", "Kyiv")}


def test_a_failure_after_extraction_leaves_the_store_untouched(memory, server, uid):
    before = _seed(memory, server, uid)
    script(server, graph([("Denver", "place"), ("Boston", "place")], [("I", "lives_in", "Denver")]))
    server.inject("server_error", times=10, tool="delete_graph_memory")
    with pytest.raises(LLMUnavailableError):
        memory.add("I moved to Denver", user_id=uid)
    assert memory.get_all(user_id=uid, include_invalidated=True) == before
    assert {e.name for e in memory.store.entities(Scope.of(user_id=uid))} == {uid, "Boston"}


def test_unusable_items_are_dropped_and_the_rest_kept(memory, server, uid):
    script(server, MALFORMED_GRAPH)
    memory.add("I know Kim", user_id=uid)
    assert triples(memory.get_all(user_id=uid)) == {(uid, "KNOWS", "Kim")}


def test_invalidation_cannot_touch_what_it_was_not_shown(memory, server, uid):
    other = f"o-{uuid.uuid4().hex[:6]}"
    _seed(memory, server, other)
    _seed(memory, server, uid)
    script(server, graph([("Boston", "place")], [], deletions=[(other, "lives_in", "Boston"), ("x", "made_up", "y")]))
    memory.add("Boston is nice", user_id=uid)
    assert len(memory.get_all(user_id=other)["relations"]) == 1
    assert len(memory.get_all(user_id=uid)["relations"]) == 1


def test_bad_timestamp_and_limit_are_clear_errors(memory, uid):
    with pytest.raises(InvalidInputError, match="timestamp"):
        memory.add("hi", user_id=uid, timestamp="yesterday-ish")
    with pytest.raises(InvalidInputError, match="limit"):
        memory.search("x", user_id=uid, limit=0)
