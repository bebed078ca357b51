"""Retention (expiration_date, TTL, purge) and erasure (forget, forget_entity) on every store.

The erasure tests grep every copy for the erased strings: Neo4j's node and relationship properties,
the embedded store's files (snapshot and journal), and the history database's files.
"""

from __future__ import annotations

import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from conftest import TEST_DIMS
from helpers import graph, make_memory, script

from graphmem import InvalidInputError
from graphmem.types import Scope, iso, utcnow


def word() -> str:
    return "Q" + "".join(chr(ord("a") + int(c, 16)) for c in uuid.uuid4().hex[:8])  # letters only, unique


@pytest.fixture
def memory(server, store, tmp_path):
    m = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "history.db"),
                    context={"summary_every": 1}, retention={"purge_every_seconds": 0})
    yield m
    m.close()


def traces(memory, needle: str) -> list[str]:
    """Where ``needle`` (any case) still is: store contents and the history database files."""
    found = []
    needle = needle.casefold()
    store = memory.store
    if hasattr(store, "_driver"):
        holds = ("any(k IN keys(x) WHERE (x[k] IS :: STRING AND toLower(x[k]) CONTAINS $needle)"
                 " OR (x[k] IS :: LIST<STRING NOT NULL> AND any(s IN x[k] WHERE toLower(s) CONTAINS $needle)))")
        rows, _, _ = store._driver.execute_query(f"MATCH (x) WHERE {holds} RETURN count(x) AS c", {"needle": needle})
        rels, _, _ = store._driver.execute_query(f"MATCH ()-[x]->() WHERE {holds} RETURN count(x) AS c", {"needle": needle})
        found += ["neo4j node"] * rows[0]["c"] + ["neo4j relationship"] * rels[0]["c"]
    else:
        found += [str(p) for p in Path(store.path).iterdir() if p.is_file() and needle.encode() in p.read_bytes().lower()]
    history = Path(memory.history_log.path)
    found += [str(p) for p in history.parent.glob(history.name + "*") if p.is_file() and needle.encode() in p.read_bytes().lower()]
    return found


def tell(memory, server, uid, text, entities, relations, facts, summary=None):
    script(server, graph(entities, relations, deletions=[]))
    server.enqueue("extract_facts", {"facts": facts})
    if summary is not None:
        server.enqueue("summarize", {"summary": summary})
    result = memory.add(text, user_id=uid)
    memory.flush()
    return result


def test_forget_entity_leaves_no_trace_anywhere(memory, server, uid):
    sister, city = word(), word()
    tell(memory, server, uid, f"My sister {sister} lives in {city}.", [(sister, "person"), (city, "place")],
         [("I", "has_sister", sister), (sister, "lives_in", city)], [f"Has a sister named {sister}"],
         summary=f"The user has a sister, {sister}, in {city}.")
    tell(memory, server, uid, "I play chess.", [("chess", "activity")], [("I", "plays", "chess")], ["Plays chess"],
         summary=f"The user has a sister, {sister}, and plays chess.")
    sister_memory = next(m for m in memory.get_all(user_id=uid)["results"] if sister in m["memory"])
    memory.update(sister_memory["id"], f"Has a younger sister named {sister}")
    assert traces(memory, sister) and sister in (memory.get_summary(user_id=uid) or "")

    report = memory.forget_entity(sister.lower(), user_id=uid)
    assert report["entities"] == 1 and report["memories"] == 1 and report["messages"] == 1 and report["summaries"] == 1

    assert traces(memory, sister) == []
    everything = memory.get_all(user_id=uid, include_invalidated=True)
    assert [m["memory"] for m in everything["results"]] == ["Plays chess"]  # the rest stays
    assert {r["relationship"] for r in everything["relations"]} == {"PLAYS"}
    assert memory.search(sister, user_id=uid)["relations"] == []
    assert memory.history(sister_memory["id"]) == [] and memory.get_summary(user_id=uid) is None
    assert memory.timeline(sister, user_id=uid)["relations"] == []
    # the city is still known, only the sister's messages are gone from the log
    conversation = memory.store.conversation(Scope.of(user_id=uid), 50)
    assert [m.content for m in conversation.messages] == ["I play chess."]


def test_forget_a_user_leaves_no_trace_and_spares_others(memory, server, uid):
    other = f"o-{uuid.uuid4().hex[:8]}"
    pet = word()
    tell(memory, server, uid, f"My dog is {pet}.", [(pet, "pet")], [("I", "has_dog", pet)], [f"Has a dog named {pet}"],
         summary=f"The user has a dog, {pet}.")
    memory.add(f"{pet} likes walks", user_id=uid, run_id="r1", infer=False)
    tell(memory, server, other, "I like tea.", [("tea", "food")], [("I", "likes", "tea")], ["Likes tea"], summary="Likes tea.")
    reads = [memory.get_all(user_id=uid), memory.get_all(user_id=uid, run_id="r1")]
    ids = {m["id"] for read in reads for m in read["results"]}
    assert len(ids) == 2 and traces(memory, uid) and traces(memory, pet)

    report = memory.forget(user_id=uid)  # the user's runs too
    assert report["memories"] == 2 and report["entities"] == 2

    assert traces(memory, pet) == [] and traces(memory, uid) == []
    assert memory.get_all(user_id=uid) == memory.get_all(user_id=uid, run_id="r1") == {"results": [], "relations": []}
    assert all(memory.history(i) == [] for i in ids) and memory.get_summary(user_id=uid) is None
    assert [m["memory"] for m in memory.get_all(user_id=other)["results"]] == ["Likes tea"]
    events = memory.history_log._db.execute("SELECT event, memory_id, old_memory, new_memory, user_id FROM history WHERE event = 'FORGET'").fetchall()
    assert events == [("FORGET", "", None, None, None)]  # that it happened, not what


def test_expired_memories_and_messages_are_invisible_then_purged(memory, server, uid):
    secret, kept = word(), word()
    soon = utcnow() + timedelta(seconds=5)
    (expiring,) = memory.add(f"The code word is {secret}", user_id=uid, infer=False, expiration_date=iso(soon))["results"]
    memory.add(f"The safe word is {kept}", user_id=uid, infer=False, expiration_date=(utcnow() + timedelta(days=2)).date())
    while utcnow() <= soon:
        time.sleep(0.1)

    assert [m["memory"] for m in memory.get_all(user_id=uid)["results"]] == [f"The safe word is {kept}"]
    assert all(secret not in m["memory"] for m in memory.search(f"code word {secret}", user_id=uid)["results"])
    assert memory.get(expiring["id"]) is None
    assert [m.content for m in memory.store.conversation(Scope.of(user_id=uid), 10).messages] == [f"The safe word is {kept}"]

    assert memory.history(expiring["id"]) == []  # its history is hidden too, before the purge
    assert memory.purge_expired()["memories"] >= 1
    assert traces(memory, secret) == [] and traces(memory, kept)
    assert memory.history(expiring["id"]) == []


def test_a_default_ttl_applies_and_bad_expiration_dates_are_refused(server, store, tmp_path, uid):
    m = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "h.db"), retention={"memory_ttl_days": 1})
    m.add("I like rain", user_id=uid, infer=False)
    (item,) = m.store.list_memories(Scope.of(user_id=uid))
    assert item.expires_at is not None and timedelta(hours=23) < item.expires_at - utcnow() <= timedelta(days=1)
    for bad in ("2001-13-01", "next week", 42):  # a past date is accepted (test_small_truths); a bad one is not
        with pytest.raises(InvalidInputError, match="expiration_date"):
            m.add("I like snow", user_id=uid, infer=False, expiration_date=bad)
    assert len(m.store.list_memories(Scope.of(user_id=uid))) == 1
    m.close()


def test_writes_purge_expired_data_on_the_way(server, store, tmp_path, uid):
    m = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "h.db"), retention={"purge_every_seconds": 0.01})
    soon = utcnow() + timedelta(seconds=1)
    m.add("short-lived note", user_id=uid, infer=False, expiration_date=soon)
    while utcnow() <= soon:
        time.sleep(0.1)
    m.add("a later note", user_id=uid, infer=False)  # purges on the way
    assert store.purge_expired(utcnow(), 100).memory_ids == []  # nothing expired is left
    assert [i.text for i in store.list_memories(Scope.of(user_id=uid))] == ["a later note"]
    m.close()


def test_cli_forget_and_purge(server, tmp_path, capsys):
    import json

    from graphmem.cli.main import main

    path = tmp_path / "config.json"
    path.write_text(json.dumps({
        "llm": {"provider": "openai_compatible", "config": {"base_url": server.base_url, "api_key": "k"}},
        "embedder": {"provider": "hashing", "config": {"dims": 64}},
        "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "graph")}},
        "history_db_path": str(tmp_path / "history.db"),
    }))
    secret = word()
    from graphmem import Memory

    with Memory.from_config(json.loads(path.read_text())) as m:
        m.add(f"my cat is {secret}", user_id="ann", infer=False)
    assert main(["forget", "--user", "ann", "--config", str(path)]) == 1  # not interactive: needs --yes
    assert main(["forget", "--user", "ann", "--yes", "--json", "--config", str(path)]) == 0
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["memories"] == 1
    assert main(["purge", "--json", "--config", str(path)]) == 0
    assert json.loads(capsys.readouterr().out) == {"memories": 0, "messages": 0}
    assert not any(secret.lower().encode() in p.read_bytes().lower() for p in tmp_path.rglob("*") if p.is_file())


def test_forget_an_agent_erases_its_own_partition_not_the_users_who_used_it(memory, uid):
    agent = f"a-{uuid.uuid4().hex[:8]}"
    memory.add("Agent-only note", agent_id=agent, infer=False)
    memory.add("The user's note via the agent", user_id=uid, agent_id=agent, infer=False)

    memory.forget(agent_id=agent)  # reads of agent_id alone see only the first: erasure matches reads

    assert memory.get_all(agent_id=agent)["results"] == []
    assert [m["memory"] for m in memory.get_all(user_id=uid)["results"]] == ["The user's note via the agent"]


def test_forget_refuses_a_narrowed_scope_and_erases_nothing(memory, uid):
    memory.add("Run note", user_id=uid, run_id="r1", infer=False)
    with pytest.raises(InvalidInputError, match="whole partition"):
        memory.forget(user_id=uid, run_id="r1")
    with pytest.raises(InvalidInputError, match="whole partition"):
        memory.forget_entity("Run", user_id=uid, run_id="r1")
    assert [m["memory"] for m in memory.get_all(user_id=uid)["results"]] == ["Run note"]
