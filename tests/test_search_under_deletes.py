"""No phantom hits (issue 45, item 5): a search that runs while the same user's memories are being
deleted never returns a hit without an id or a text. On Neo4j (read committed), a node another
transaction deletes while a statement reads it comes back with every property null; such rows are
dropped where rows become memories and relations (stores/neo4j/memories.py, queries.py). The row
handling is tested with the rows Neo4j returns for them; then a delete loop beside a search loop
runs on both stores."""

from __future__ import annotations

import threading

from conftest import TEST_DIMS
from helpers import make_memory

from graphmem.stores.neo4j import memories, queries
from graphmem.testing import ScriptedLLMServer

MEMORY_KEYS = ("id", "text", "hash", "user_id", "agent_id", "run_id", "metadata", "role", "turn", "times",
               "created_at", "updated_at", "deleted_at", "said_at")
#: memory_context.cypher's projection of a node deleted by another transaction while it was read
DELETED = dict.fromkeys(MEMORY_KEYS)
LIVE = {**DELETED, "id": "m-1", "text": "likes green tea", "hash": "h", "user_id": "alice", "metadata": "{}",
        "turn": "0000000001", "created_at": "2026-01-01T00:00:00Z"}


def test_rows_of_memories_deleted_while_read_are_dropped():
    context = memories.to_context({
        "neighbours": [{"of": "hit", "offset": -1, "vector": 0.2, "memory": DELETED},
                       {"of": "hit", "offset": 1, "vector": 0.3, "memory": LIVE}],
        "dated": [{"vector": 0.1, "memory": DELETED}, {"vector": 0.4, "memory": LIVE}],
    })
    assert [(n.offset, n.item.id) for n in context.neighbours] == [(1, "m-1")]
    assert [m.id for m in context.dated] == ["m-1"]
    hits = memories.to_hits([{"memory": DELETED, "vector": 0.9, "fulltext": 0.0},
                             {"memory": LIVE, "vector": 0.5, "fulltext": 1.0}])
    assert [(m.id, m.text, m.scores) for m in hits] == [("m-1", "likes green tea", {"vector": 0.5, "fulltext": 1.0})]
    assert [m.id for m in memories.to_memories([{"memory": DELETED}, {"memory": LIVE}], "memory")] == ["m-1"]
    assert [(i, m.id) for i, m in memories.to_similar([{"i": 0, "cosine": 0.9, "memory": DELETED},
                                                       {"i": 1, "cosine": 0.8, "memory": LIVE}])] == [(1, "m-1")]


def test_rows_of_relations_deleted_while_read_are_dropped():
    live = {"rel": {"id": "r-1", "mentions": 1}, "source_id": "e-1", "source": "alice", "relationship": "LIKES",
            "destination_id": "e-2", "destination": "green tea"}
    dead_relationship = {**live, "rel": {"id": None, "mentions": None}}
    dead_endpoint = {**live, "source": None, "source_id": None}
    assert [r.id for r in queries.to_relations([dead_relationship, live, dead_endpoint])] == ["r-1"]


def test_search_beside_deletes_never_returns_a_phantom(store, tmp_path):
    """Each store: 40 messages stored verbatim (turns, so searches read their neighbours), deleted one
    by one on one thread while another searches; every hit of every search has an id and a text."""
    user = f"phantom-{tmp_path.name[-8:]}"
    with ScriptedLLMServer() as server, make_memory(server, store, TEST_DIMS) as memory:
        memory.add([{"role": "user" if i % 2 else "assistant", "content": f"turn {i}: green tea and the river walk {i % 7}"}
                    for i in range(40)], user_id=user, infer=False)
        ids = [m["id"] for m in memory.get_all(user_id=user, limit=1000)["results"]]
        assert len(ids) == 40
        done = threading.Event()
        failures: list[BaseException] = []

        def delete_all_one_by_one() -> None:
            try:
                for memory_id in ids:
                    memory.delete(memory_id)
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                failures.append(exc)
            finally:
                done.set()

        deleter = threading.Thread(target=delete_all_one_by_one)
        deleter.start()
        phantoms, searches = [], 0
        while searches < 2000 and (not done.is_set() or searches < 5):
            for hit in memory.search("green tea by the river", user_id=user, limit=10)["results"]:
                if not hit.get("id") or not hit.get("memory"):
                    phantoms.append(hit)
            searches += 1
        deleter.join()
        assert failures == [] and phantoms == [], (failures, phantoms[:3])
        assert memory.get_all(user_id=user)["results"] == []
        assert searches >= 5
