"""``Memory.provenance``: why a relation is believed. A relation names the adds that created and
retired it; the add id resolves, inside its scope only, to the add's messages, memory events and
relation versions. Scripted model over HTTP, every store."""

from __future__ import annotations

import uuid

import pytest
from conftest import TEST_DIMS
from helpers import graph, make_memory, script

from graphmem.errors import InvalidInputError, NotFoundError


def _boston_then_denver(memory, server, uid):
    script(server, graph([("Boston", "city")], [("I", "lives_in", "Boston")]))
    server.enqueue("extract_facts", {"facts": ["Lives in Boston"]})
    memory.add("I live in Boston", user_id=uid)
    script(server, graph([("Denver", "city")], [("I", "lives_in", "Denver")], deletions=[(uid, "LIVES_IN", "Boston")]))
    server.enqueue("extract_facts", {"facts": ["Lives in Denver"]})
    # the model's update answer: Boston's memory becomes Denver's (asked once or twice: the staged
    # add may ask before and after the retirement)
    server.set_handler(lambda tool, body: {"memory": [{"id": "0", "text": "Lives in Denver", "event": "UPDATE"}]}
                       if tool == "update_memory" else None)
    memory.add("I moved to Denver", user_id=uid)
    return {r["destination"]: r for r in memory.get_all(user_id=uid, include_invalidated=True)["relations"]}


def test_an_add_id_resolves_to_the_messages_memories_and_relations_it_brought(server, store, uid, tmp_path):
    with make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "history.db")) as memory:
        versions = _boston_then_denver(memory, server, uid)
        boston = versions["Boston"]["provenance"]
        created = memory.provenance(boston["added_by"][0], user_id=uid)
        assert [m["content"] for m in created["messages"]] == ["I live in Boston"] and created["messages_kept"]
        assert [(e["event"], e["new_memory"]) for e in created["memories"]] == [("ADD", "Lives in Boston")]
        assert [r["destination"] for r in created["relations"]["asserted"]] == ["Boston"] and created["relations"]["retired"] == []
        moved = memory.provenance(boston["retired_by"], user_id=uid)  # why Boston is no longer believed
        assert [m["content"] for m in moved["messages"]] == ["I moved to Denver"]
        assert "Lives in Denver" in [e["new_memory"] for e in moved["memories"]]
        assert [r["destination"] for r in moved["relations"]["asserted"]] == ["Denver"]
        assert [r["destination"] for r in moved["relations"]["retired"]] == ["Boston"]
        assert moved["add_id"] == boston["retired_by"] == versions["Denver"]["provenance"]["added_by"][0]


def test_another_scope_learns_nothing_of_an_add(server, store, uid, tmp_path):
    with make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "history.db")) as memory:
        versions = _boston_then_denver(memory, server, uid)
        add_id = versions["Boston"]["provenance"]["added_by"][0]
        unknown = uuid.uuid4().hex
        answers = []
        for asked, scope in ((add_id, {"user_id": f"other-{uuid.uuid4().hex[:8]}"}),  # another user
                             (add_id, {"agent_id": f"bot-{uuid.uuid4().hex[:8]}"}),  # an agent without the user
                             (unknown, {"user_id": uid})):  # an id nobody wrote
            with pytest.raises(NotFoundError) as caught:
                memory.provenance(asked, **scope)
            answers.append(str(caught.value).replace(asked, "ID"))
        assert answers[0] == answers[1] == answers[2]  # one answer: nothing tells the id exists elsewhere
        for bad in ("", "   ", None, 42):
            with pytest.raises(InvalidInputError):
                memory.provenance(bad, user_id=uid)


def test_an_add_whose_messages_left_the_log_still_shows_its_memories_and_relations(server, store, uid, tmp_path):
    with make_memory(server, store, TEST_DIMS, context={"max_messages": 1, "summary_every": 0},
                     history_db_path=str(tmp_path / "history.db")) as memory:
        versions = _boston_then_denver(memory, server, uid)
        old = memory.provenance(versions["Boston"]["provenance"]["added_by"][0], user_id=uid)
        assert old["messages"] == [] and not old["messages_kept"]  # the log keeps the newest message only
        assert [r["destination"] for r in old["relations"]["asserted"]] == ["Boston"]
        assert [e["new_memory"] for e in old["memories"]] == ["Lives in Boston"]
