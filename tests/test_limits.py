"""One table of input limits (graphmem.schema.limits, issue 33), through the Python API on both stores:
every value at and just under a limit is accepted and reads back whole (get_all, search, export),
every value just over is refused with LimitExceededError before anything is written. The same
refusals through REST, MCP (stdio and HTTP) and `graphmem import`: test_limits_doors.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import TEST_DIMS
from helpers import make_memory

from graphmem import ConfigError, InvalidInputError, LimitExceededError, Memory
from graphmem.lifecycle.export import read_graph, to_json
from graphmem.schema import limits as L
from graphmem.types import Scope

DOCS = Path(__file__).resolve().parent.parent / "docs"


@pytest.fixture
def memory(server, store):
    m = make_memory(server, store, TEST_DIMS)
    yield m
    m.close()


def nest(levels: int, leaf: object = "x") -> object:
    """``levels`` nested containers, dicts and lists by turns: nest(1) == {"k": "x"}."""
    value = leaf
    for i in range(levels):
        value = {"k": value} if (levels - 1 - i) % 2 == 0 else [value]
    return value


def sized_metadata(chars: int) -> dict:
    """Metadata whose compact JSON has exactly ``chars`` characters."""
    frame = len('{"k":""}')
    return {"k": "é" * (chars - frame)}


def test_the_docs_table_is_the_limits_table():
    page = (DOCS / "python-api.md").read_text(encoding="utf-8")
    assert L.markdown_table() in page
    assert {lim.name for lim in L.LIMITS} == {n for n in dir(L) if n.isupper() and n[0] != "_" and isinstance(getattr(L, n), int)}


def test_nest_counts_levels_as_the_limit_does():
    L.json_shape("m", nest(L.METADATA_DEPTH), L.METADATA_DEPTH, L.METADATA_CHARS)
    with pytest.raises(LimitExceededError, match="deeper than 16"):
        L.json_shape("m", nest(L.METADATA_DEPTH + 1), L.METADATA_DEPTH, L.METADATA_CHARS)
    assert len(json.dumps(sized_metadata(L.METADATA_CHARS), ensure_ascii=False, separators=(",", ":"))) == L.METADATA_CHARS


#: (what, messages, metadata) accepted at and just under each limit
ACCEPTED = [
    ("message at the limit", "a" * L.MESSAGE_CHARS, None),
    ("message under the limit", "b" * (L.MESSAGE_CHARS - 1), None),
    ("messages per add", [f"m{i}" for i in range(L.MESSAGES_PER_ADD)], None),
    ("messages per add under", [f"n{i}" for i in range(L.MESSAGES_PER_ADD - 1)], None),
    ("characters per add", ["c" * L.MESSAGE_CHARS] * (L.ADD_CHARS // L.MESSAGE_CHARS), None),
    ("characters per add under", ["d" * L.MESSAGE_CHARS] * (L.ADD_CHARS // L.MESSAGE_CHARS - 1) + ["e" * (L.MESSAGE_CHARS - 1)], None),
    ("metadata depth", "deep", nest(L.METADATA_DEPTH)),
    ("metadata depth under", "deep-1", nest(L.METADATA_DEPTH - 1)),
    ("metadata size", "big", sized_metadata(L.METADATA_CHARS)),
    ("metadata size under", "big-1", sized_metadata(L.METADATA_CHARS - 1)),
    ("metadata keys", "keys", {f"k{i}": i for i in range(L.METADATA_KEYS)}),
    ("metadata keys under", "keys-1", {f"k{i}": str(i) for i in range(L.METADATA_KEYS - 1)}),
    ("metadata key length", "key", {"k" * L.METADATA_KEY_CHARS: 1, "nul": "a\x00b", "user_id": "meta"}),
    ("metadata key length under", "key-1", {"k" * (L.METADATA_KEY_CHARS - 1): [1.5, None, True]}),
]


def test_every_accepted_value_reads_back_whole(memory, uid):
    """At and just under each limit: stored, then get_all, search and export read it back whole."""
    for n, (what, messages, metadata) in enumerate(ACCEPTED):
        user = f"{uid}-{n}"
        added = memory.add(messages, user_id=user, metadata=metadata, infer=False)
        count = len(messages) if isinstance(messages, list) else 1
        assert len(added["results"]) == count, what
        listed = memory.get_all(user_id=user, limit=L.RESULT_LIMIT)["results"]
        assert len(listed) == count and all(m["metadata"] == (metadata or {}) for m in listed), what
        texts = sorted(m["memory"] for m in listed)
        assert texts == sorted(messages if isinstance(messages, list) else [messages]), what
        found = memory.search(texts[0][: L.QUERY_CHARS], user_id=user, limit=3)["results"]
        assert found and found[0]["metadata"] == (metadata or {}), what
        exported = json.loads(to_json(read_graph(memory.store, Scope.of(user_id=user), True)))
        assert len(exported["memories"]) == count, what
        assert all(m["metadata"] == (metadata or {}) for m in exported["memories"]), what


def test_metadata_keys_named_like_built_in_fields_are_filtered_as_metadata(memory, uid):
    memory.add("tagged", user_id=uid, infer=False, metadata={"user_id": "someone", "memory": "m"})
    memory.add("plain", user_id=uid, infer=False)
    for read in (lambda f: memory.get_all(user_id=uid, filters=f), lambda f: memory.search("tagged plain", user_id=uid, filters=f)):
        assert [m["memory"] for m in read({"metadata.user_id": "someone"})["results"]] == ["tagged"]
        assert [m["memory"] for m in read({"metadata.memory": {"in": ["m"]}})["results"]] == ["tagged"]
    with pytest.raises(InvalidInputError, match="metadata.user_id"):  # a plain user_id is the scope: the error says how
        memory.get_all(user_id=uid, filters={"user_id": "someone"})


def test_filters_and_query_at_their_limits_are_accepted(memory, uid):
    memory.add("tea", user_id=uid, infer=False, metadata={"n": 1})
    at_limit = {"n": {"in": list(range(L.FILTER_LIST))}}
    assert [m["memory"] for m in memory.get_all(user_id=uid, filters=at_limit)["results"]] == ["tea"]
    deep: dict = {"n": 1}
    for _ in range(L.FILTER_DEPTH - 1):
        deep = {"AND": [deep]}
    assert [m["memory"] for m in memory.search("tea", user_id=uid, filters=deep)["results"]] == ["tea"]
    conditions = {"AND": [{"n": {"ne": -i}} for i in range(1, L.FILTER_CONDITIONS + 1)]}
    assert len(memory.get_all(user_id=uid, filters=conditions)["results"]) == 1
    assert memory.search("tea " + "x" * (L.QUERY_CHARS - 4), user_id=uid)["results"]
    assert memory.timeline("e" * L.ENTITY_CHARS, user_id=uid)["relations"] == []


def _over(uid: str) -> dict[str, object]:
    big_filter = {"n": {"in": ["v" * 100] * 700}}  # 700 values of 100 characters: over FILTER_CHARS, under FILTER_LIST
    deep_filter: dict = {"n": 1}
    for _ in range(L.FILTER_DEPTH):
        deep_filter = {"AND": [deep_filter]}
    return {
        "message": lambda m: m.add("a" * (L.MESSAGE_CHARS + 1), user_id=uid, infer=False),
        "message (infer)": lambda m: m.add("a" * (L.MESSAGE_CHARS + 1), user_id=uid),
        "content parts": lambda m: m.add([{"role": "user", "content": [{"type": "text", "text": "p" * L.MESSAGE_CHARS}, "q"]}],
                                         user_id=uid, infer=False),
        "messages per add": lambda m: m.add(["m"] * (L.MESSAGES_PER_ADD + 1), user_id=uid, infer=False),
        "characters per add": lambda m: m.add(["c" * L.MESSAGE_CHARS] * 10 + ["c"], user_id=uid, infer=False),
        "metadata depth": lambda m: m.add("hi", user_id=uid, infer=False, metadata=nest(L.METADATA_DEPTH + 1)),
        "metadata depth 300": lambda m: m.add("hi", user_id=uid, infer=False, metadata=nest(300)),
        "metadata depth 1000": lambda m: m.add("hi", user_id=uid, infer=False, metadata=nest(1000)),
        "metadata size": lambda m: m.add("hi", user_id=uid, infer=False, metadata=sized_metadata(L.METADATA_CHARS + 1)),
        "metadata keys": lambda m: m.add("hi", user_id=uid, infer=False, metadata={f"k{i}": i for i in range(L.METADATA_KEYS + 1)}),
        "metadata key length": lambda m: m.add("hi", user_id=uid, infer=False, metadata={"k" * (L.METADATA_KEY_CHARS + 1): 1}),
        "query": lambda m: m.search("q" * (L.QUERY_CHARS + 1), user_id=uid),
        "filter size": lambda m: m.get_all(user_id=uid, filters=big_filter),
        "filter depth": lambda m: m.search("tea", user_id=uid, filters=deep_filter),
        "filter list": lambda m: m.get_all(user_id=uid, filters={"n": {"in": list(range(L.FILTER_LIST + 1))}}),
        "filter depth 1000": lambda m: m.get_all(user_id=uid, filters=nest(1000)),
        "entity": lambda m: m.timeline("e" * (L.ENTITY_CHARS + 1), user_id=uid),
        "scope id": lambda m: m.get_all(user_id="u" * (L.SCOPE_ID_CHARS + 1)),
        "batch size": lambda m: m.add_many([{"messages": "hi", "user_id": uid}], infer=False, batch_size=L.BATCH_SIZE + 1),
        "workers": lambda m: m.add_many([{"messages": "hi", "user_id": uid}], infer=False, workers=L.BULK_WORKERS + 1),
    }


def test_every_value_over_a_limit_is_refused_and_writes_nothing(memory, server, uid):
    for what, call in _over(uid).items():
        with pytest.raises(LimitExceededError) as raised:
            call(memory)
        assert "the limit is" in str(raised.value), what
    assert memory.get_all(user_id=uid)["results"] == [] and server.calls() == 0


def test_updates_are_bounded_and_cleaned_like_adds(memory, uid):
    (added,) = memory.add("I like tea", user_id=uid, infer=False)["results"]
    with pytest.raises(LimitExceededError, match="100,000"):
        memory.update(added["id"], "t" * (L.UPDATE_CHARS + 1))
    with pytest.raises(LimitExceededError, match="deeper"):
        memory.update(added["id"], "I like tea", metadata=nest(L.METADATA_DEPTH + 1))
    memory.update(added["id"], "x", metadata={f"a{i}": i for i in range(L.METADATA_KEYS - 1)})
    with pytest.raises(LimitExceededError, match="top-level keys"):  # merged with what the memory holds
        memory.update(added["id"], "x", metadata={"b1": 1, "b2": 2})
    assert memory.update(added["id"], "I like\x00 coffee\x07")["memory"] == "I like coffee"  # NUL stripped, as add() does
    assert memory.get(added["id"])["memory"] == "I like coffee"
    assert memory.update(added["id"], "t" * L.UPDATE_CHARS)["memory"] == "t" * L.UPDATE_CHARS
    with pytest.raises(InvalidInputError, match="non-empty"):
        memory.update(added["id"], "\x00\x00")


def test_a_lone_surrogate_in_a_filter_is_refused_by_every_read(memory, uid):
    memory.add("tea", user_id=uid, infer=False)
    for call in (lambda: memory.get_all(user_id=uid, filters={"k": "\ud800"}),
                 lambda: memory.get_all(user_id=uid, filters={"OR": [{"k\udfff": 1}, {"memory": {"contains": "\ud800"}}]}),
                 lambda: memory.search("", user_id=uid, filters={"k": "\ud800"}),
                 lambda: memory.search("tea", user_id=uid, filters={"k": {"in": ["ok", "\ud800"]}})):
        with pytest.raises(InvalidInputError, match="surrogate"):
            call()


def test_small_argument_errors_are_graphmem_errors(memory, tmp_path):
    for bad in (5, None, "items", {"messages": "hi"}):
        with pytest.raises(InvalidInputError, match="iterable"):
            memory.add_many(bad)
    for config in ([1, 2], "config.json", 7):
        with pytest.raises(ConfigError, match="dict"):
            Memory.from_config(config)
    with pytest.raises(ConfigError, match="bolt://"):
        Memory({"graph_store": {"provider": "neo4j", "config": {"url": "http://127.0.0.1:7474"}},
                "history_db_path": str(tmp_path / "h.db")}, embedder=memory.embedder)


def test_an_export_with_metadata_over_the_limits_is_refused_by_load(memory, uid, tmp_path):
    from graphmem.lifecycle.load import read_export

    memory.add("tea", user_id=uid, infer=False, metadata=nest(L.METADATA_DEPTH))
    doc = json.loads(to_json(read_graph(memory.store, Scope.of(user_id=uid), True)))
    path = tmp_path / "export.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    assert read_export(path).memories[0].metadata == nest(L.METADATA_DEPTH)  # at the limit: loads
    doc["memories"][0]["metadata"] = nest(L.METADATA_DEPTH + 1)
    path.write_text(json.dumps(doc), encoding="utf-8")
    with pytest.raises(InvalidInputError, match="deeper than 16 levels"):
        read_export(path)
