"""add_mode "single_pass" on every store: the same graph and memories as the staged mode on the
project's scenarios, with exactly one chat request per add; omitted tools and malformed answers.

Both modes talk to one scripted model (a handler of the scripted server) that answers each tool from
the turn's script and from what the request SHOWS it: a relation is retired only when the request
listed it, a memory updated or deleted only when the request listed it. So a mode that fails to show
the model what it must reconcile ends in a different state, and the comparison fails.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field

import pytest
from conftest import TEST_DIMS
from helpers import make_memory

from graphmem import LLMResponseError
from graphmem.types import Scope

SELF = "I"


@dataclass
class Turn:
    text: str
    at: str
    entities: list[tuple[str, str]]
    relations: list[tuple]  # (source, relationship, destination[, valid_at])
    facts: list[str]
    retire: list[tuple[str, str, str]] = field(default_factory=list)
    updates: dict[str, str] = field(default_factory=dict)  # text of a shown memory -> its new text
    deletes: list[str] = field(default_factory=list)  # texts of shown memories that are no longer true


class Model:
    """The scripted model: one Turn at a time, answered in either mode's requests."""

    def __init__(self) -> None:
        self.turn: Turn | None = None
        self.user = ""

    def name(self, n: str) -> str:
        return self.user if n == SELF else n

    def __call__(self, tool: str | None, body: dict):
        t = self.turn
        assert t is not None
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        if tool == "extract_entities":
            return {"entities": [{"entity": self.name(n), "entity_type": ty} for n, ty in t.entities]}
        if tool == "establish_relationships":
            rels = []
            for r in t.relations:
                item = {"source": self.name(r[0]), "relationship": r[1], "destination": self.name(r[2])}
                if len(r) > 3:
                    item["valid_at"] = r[3]
                rels.append(item)
            return {"relations": rels}
        if tool == "extract_facts":
            return {"facts": t.facts}
        if tool == "delete_graph_memory":
            listed = prompt.split("Existing relations:\n", 1)[-1].split("\n\n", 1)[0].casefold()
            shown = [(a, r, b) for a, r, b in t.retire if f"- {self.name(a)} -- {r} -- {self.name(b)}".casefold() in listed]
            return {"relations": [{"source": self.name(a), "relationship": r, "destination": self.name(b)} for a, r, b in shown]}
        if tool == "update_memory":
            return {"memory": self._decisions(t, existing_memories(prompt))}
        return None

    @staticmethod
    def _decisions(t: Turn, existing: list[dict]) -> list[dict]:
        out, used = [], set()
        for m in existing:
            if m["text"] in t.updates:
                out.append({"id": m["id"], "text": t.updates[m["text"]], "event": "UPDATE"})
                used.add(t.updates[m["text"]])
            elif m["text"] in t.deletes:
                out.append({"id": m["id"], "text": m["text"], "event": "DELETE"})
            else:
                out.append({"id": m["id"], "text": m["text"], "event": "NONE"})
        out += [{"id": str(100 + i), "text": f, "event": "ADD"} for i, f in enumerate(t.facts) if f not in used]
        return out


def existing_memories(prompt: str) -> list[dict]:
    match = re.search(r"Existing memories:\n(\[\]|\[.*?\n\])", prompt, re.S)
    return json.loads(match.group(1)) if match else []


MOVES = [
    Turn("I live in Boston and work at Acme.", "2023-03-01T10:00:00Z", [(SELF, "person"), ("Boston", "city"), ("Acme", "organization")],
         [(SELF, "lives_in", "Boston"), (SELF, "works_at", "Acme")], ["Lives in Boston", "Works at Acme"]),
    Turn("I moved to Denver last month.", "2024-06-10T10:00:00Z", [(SELF, "person"), ("Denver", "city")],
         [(SELF, "lives_in", "Denver", "2024-05-01T00:00:00Z")], ["Lives in Denver since May 2024"],
         retire=[(SELF, "LIVES_IN", "Boston")], updates={"Lives in Boston": "Lives in Denver since May 2024"}),
]
LIKES = [
    Turn("I like pizza.", "2024-01-01T10:00:00Z", [(SELF, "person"), ("pizza", "food")], [(SELF, "likes", "pizza")], ["Likes pizza"]),
    Turn("I like burgers too.", "2024-01-02T10:00:00Z", [(SELF, "person"), ("burgers", "food")], [(SELF, "likes", "burgers")],
         ["Likes burgers"]),
]
OUT_OF_ORDER = [  # the newer fact arrives first; the model claims the late Boston message retires Denver
    Turn("I moved to Denver last month.", "2024-06-15T09:00:00Z", [(SELF, "person"), ("Denver", "city")],
         [(SELF, "lives_in", "Denver", "2024-05-15")], ["Lives in Denver"]),
    Turn("I live in Boston.", "2023-03-01T12:00:00Z", [(SELF, "person"), ("Boston", "city")], [(SELF, "lives_in", "Boston")],
         ["Lives in Boston"], retire=[(SELF, "LIVES_IN", "Denver")]),
]
TWO_HOP = [  # Ana's city is two hops from the user: only her name in the message brings it to the request
    Turn("My sister Ana lives in Chicago.", "2024-01-01T10:00:00Z", [(SELF, "person"), ("Ana", "person"), ("Chicago", "city")],
         [(SELF, "has_sister", "Ana"), ("Ana", "lives_in", "Chicago")], ["Has a sister named Ana", "Ana lives in Chicago"]),
    Turn("I play tennis.", "2024-01-02T10:00:00Z", [(SELF, "person"), ("tennis", "sport")], [(SELF, "plays", "tennis")],
         ["Plays tennis"]),
    Turn("Ana moved to Seattle.", "2024-02-01T10:00:00Z", [("Ana", "person"), ("Seattle", "city")], [("Ana", "lives_in", "Seattle")],
         ["Ana lives in Seattle"], retire=[("Ana", "LIVES_IN", "Chicago")], updates={"Ana lives in Chicago": "Ana lives in Seattle"}),
]
GAVE_AWAY = [  # the second add has no new fact: it only ends a relation that a memory states
    Turn("I have a dog named Rex and I play tennis.", "2024-01-01T10:00:00Z", [(SELF, "person"), ("Rex", "dog"), ("tennis", "sport")],
         [(SELF, "has_pet", "Rex"), (SELF, "plays", "tennis")], ["Has a dog named Rex", "Plays tennis"]),
    Turn("I gave Rex to my sister.", "2024-03-01T10:00:00Z", [(SELF, "person"), ("Rex", "dog")], [], [],
         retire=[(SELF, "HAS_PET", "Rex")], deletes=["Has a dog named Rex"]),
]
HOSTILE = "Robert'); MATCH (n) DETACH DELETE n; //"
HOSTILE_NAMES = [
    Turn(f"My friend is {HOSTILE} and I like `x`}}]-(m) DELETE m.", "2024-01-01T10:00:00Z",
         [(SELF, "person"), (HOSTILE, "person"), ('"}]) RETURN 1 //', "thing")],
         [(SELF, "has_friend", HOSTILE), (SELF, "likes`]->() DELETE r //", '"}]) RETURN 1 //')],
         [f"Has a friend named {HOSTILE}"]),
    Turn(f"{HOSTILE} moved away, we are no longer friends.", "2024-02-01T10:00:00Z", [(HOSTILE, "person")], [],
         ["Is no longer friends with Robert"], retire=[(SELF, "HAS_FRIEND", HOSTILE)],
         deletes=[f"Has a friend named {HOSTILE}"]),
]
CLINIC = {
    "mode": "strict",
    "entity_types": {"Person": {"description": "a human being"}, "Medication": {"description": "a drug someone takes"}},
    "relation_types": {"TAKES": {"description": "a person takes a medication", "source": ["Person"], "target": ["Medication"]}},
}
ONTOLOGY = [
    Turn("I take aspirin and I live in Paris.", "2024-01-01T10:00:00Z", [(SELF, "Person"), ("Aspirin", "Medication"), ("Paris", "place")],
         [(SELF, "takes", "Aspirin"), (SELF, "lives_in", "Paris")], ["Takes aspirin"]),
    Turn("I switched from aspirin to ibuprofen.", "2024-03-01T10:00:00Z", [(SELF, "Person"), ("Ibuprofen", "Medication")],
         [(SELF, "takes", "Ibuprofen")], ["Takes ibuprofen"], retire=[(SELF, "TAKES", "Aspirin")],
         updates={"Takes aspirin": "Takes ibuprofen"}),
]
SCENARIOS = {"moves": (MOVES, {}), "likes": (LIKES, {}), "gave_away": (GAVE_AWAY, {}), "out_of_order": (OUT_OF_ORDER, {}), "two_hop": (TWO_HOP, {}),
             "hostile_names": (HOSTILE_NAMES, {}), "ontology": (ONTOLOGY, {"graph_store": {"ontology": CLINIC}})}


def play(server, store, tmp_path, mode: str, turns: list[Turn], config: dict) -> tuple[dict, list[int]]:
    """Run the turns for a fresh user; the end state and the chat requests of each add."""
    model = Model()
    model.user = f"u-{uuid.uuid4().hex[:8]}"
    server.reset()
    server.set_handler(model)
    memory = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / f"{mode}.db"), add_mode=mode, **config)
    requests = []
    try:
        for turn in turns:
            model.turn = turn
            before = len(server.requests)
            memory.add(turn.text, user_id=model.user, timestamp=turn.at)
            requests.append(len(server.requests) - before)
        return state(memory, model.user), requests
    finally:
        memory.flush()


def state(memory, user: str) -> dict:
    """Everything the scenario leaves, without ids and transaction times (which differ per run)."""
    name = lambda n: "<user>" if n == user else n  # noqa: E731
    relations = sorted(
        (name(r["source"]), r["relationship"], name(r["destination"]), r["valid_at"], r["invalid_at"], r["expired_at"] is not None)
        for r in memory.get_all(user_id=user, include_invalidated=True)["relations"]
    )
    live = sorted(m["memory"] for m in memory.get_all(user_id=user)["results"])
    entities = sorted((name(e.name), e.entity_type) for e in memory.store.entities(Scope.of(user_id=user)))
    return {"relations": relations, "memories": live, "entities": entities}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_single_pass_leaves_the_staged_state_with_one_request_per_add(server, store, tmp_path, scenario):
    turns, config = SCENARIOS[scenario]
    staged, staged_requests = play(server, store, tmp_path, "staged", turns, config)
    single, single_requests = play(server, store, tmp_path, "single_pass", turns, config)
    assert single == staged
    assert single_requests == [1] * len(turns)
    assert sum(staged_requests) > len(turns)  # the staged mode made its separate stage requests
    assert staged["relations"] and staged["memories"]


def test_what_the_scenarios_end_in(server, store, tmp_path):
    """The comparison above is only worth something if the staged end states are the right ones."""
    moves, _ = play(server, store, tmp_path, "single_pass", MOVES, {})
    assert moves["memories"] == ["Lives in Denver since May 2024", "Works at Acme"]
    boston = [r for r in moves["relations"] if r[2] == "Boston"]
    assert boston == [("<user>", "LIVES_IN", "Boston", "2023-03-01T10:00:00Z", "2024-05-01T00:00:00Z", True)]
    late, _ = play(server, store, tmp_path, "single_pass", OUT_OF_ORDER, {})
    assert [(r[2], r[3], r[4], r[5]) for r in late["relations"]] == [
        ("Boston", "2023-03-01T12:00:00Z", "2024-05-15T00:00:00Z", False), ("Denver", "2024-05-15T00:00:00Z", None, False)]
    hop, _ = play(server, store, tmp_path, "single_pass", TWO_HOP, {})
    assert ("Ana", "LIVES_IN", "Chicago") in {r[:3] for r in hop["relations"] if r[5]}  # retired, two hops away
    assert "Ana lives in Seattle" in hop["memories"] and "Ana lives in Chicago" not in hop["memories"]
    hostile, _ = play(server, store, tmp_path, "single_pass", HOSTILE_NAMES, {})
    assert (HOSTILE, "person") in hostile["entities"] and hostile["memories"] == ["Is no longer friends with Robert"]
    onto, _ = play(server, store, tmp_path, "single_pass", ONTOLOGY, {"graph_store": {"ontology": CLINIC}})
    assert {r[2] for r in onto["relations"]} == {"Aspirin", "Ibuprofen"}  # lives_in Paris: off the ontology
    gave, _ = play(server, store, tmp_path, "single_pass", GAVE_AWAY, {})
    assert gave["memories"] == ["Plays tennis"]  # no new fact, yet the memory follows the graph
    assert [r[2] for r in gave["relations"] if r[5]] == ["Rex"]
    likes, _ = play(server, store, tmp_path, "single_pass", LIKES, {})
    assert [r[5] for r in likes["relations"]] == [False, False]


def test_the_request_offers_five_tools_and_lists_relations_and_memories(server, store, tmp_path):
    play(server, store, tmp_path, "single_pass", MOVES, {})
    first, second = server.requests
    assert second.body["tool_choice"] == "required"
    assert [t["function"]["name"] for t in second.body["tools"]] == [
        "extract_entities", "establish_relationships", "extract_facts", "delete_graph_memory", "update_memory"]
    user = second.messages[-1]["content"]
    assert "-- LIVES_IN -- Boston" in user and "Newest messages:\nuser: I moved to Denver" in user
    shown = existing_memories(user)
    assert sorted(m["text"] for m in shown) == ["Lives in Boston", "Works at Acme"]
    assert {m["id"] for m in shown} == {"0", "1"}  # short ids, never the stored UUIDs
    assert "Existing relations:\n- (none)" in first.messages[-1]["content"]


def single_pass_memory(server, store, tmp_path):
    return make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "h.db"), add_mode="single_pass")


def test_a_model_that_omits_tools_contributes_nothing_for_them(server, store, tmp_path, uid):
    memory = single_pass_memory(server, store, tmp_path)
    try:
        server.enqueue("extract_entities", {"entities": [{"entity": "Kim", "entity_type": "person"}]})
        server.enqueue("establish_relationships", [])  # no call of the relations tool at all
        server.enqueue("extract_facts", {"facts": ["Knows Kim"]})
        server.enqueue("delete_graph_memory", [])
        server.enqueue("update_memory", [])
        result = memory.add("I know Kim.", user_id=uid)
        assert server.calls() == 1  # no follow-up request for the missing relations
        assert result["relations"] == [] and [r["memory"] for r in result["results"]] == ["Knows Kim"]
        assert memory.get_all(user_id=uid)["relations"] == []
    finally:
        memory.flush()


def test_malformed_answers_write_nothing(server, store, tmp_path, uid):
    memory = single_pass_memory(server, store, tmp_path)
    try:
        for tool in ("extract_entities", "establish_relationships", "extract_facts", "delete_graph_memory", "update_memory"):
            server.enqueue(tool, '{"broken": ')  # arguments that are not JSON, for every tool, every attempt
            server.enqueue(tool, '{"broken": ')
            server.enqueue(tool, '{"broken": ')
        with pytest.raises(LLMResponseError):
            memory.add("I live in Boston.", user_id=uid)
        assert memory.get_all(user_id=uid) == {"results": [], "relations": []}
        # unusable items beside good ones: the good ones are written, the rest counted
        server.reset()
        server.enqueue("extract_entities", {"entities": [{"entity": "Boston", "entity_type": "city"}, {"entity": 5}, "junk"]})
        server.enqueue("establish_relationships", {"relations": [{"source": "I", "relationship": "lives_in", "destination": "Boston"},
                                                                 {"source": "I", "relationship": "knows", "destination": "Ghost"}]})
        server.enqueue("extract_facts", {"facts": ["Lives in Boston", 7]})
        server.enqueue("delete_graph_memory", {"relations": [{"source": "I", "relationship": "lives_in", "destination": "Nowhere"}]})
        server.enqueue("update_memory", {"memory": [{"id": "9", "text": "x", "event": "DELETE"}]})
        result = memory.add("I live in Boston.", user_id=uid)
        assert result["dropped"] == {"entities": 2, "facts": 1, "invalidations": 1, "relations": 1}
        assert [(r["source"], r["relationship"], r["destination"]) for r in memory.get_all(user_id=uid)["relations"]] == [
            (uid, "LIVES_IN", "Boston")]
    finally:
        memory.flush()


def test_a_single_pass_add_makes_two_embedding_requests_and_bounded_reads(server, store, tmp_path, uid):
    from graphmem.embeddings.openai import OpenAIEmbedder

    embedder = OpenAIEmbedder(model="e", api_key="k", base_url=server.base_url, dims=TEST_DIMS)
    from helpers import llm_config

    from graphmem import Memory

    memory = Memory({"llm": llm_config(server), "history_db_path": str(tmp_path / "h.db"), "add_mode": "single_pass"},
                    store=store, embedder=embedder)
    model = Model()
    model.user = uid
    server.set_handler(model)
    try:
        for turn in MOVES:
            model.turn = turn
            calls, trips = server.embedding_calls, store.round_trips
            memory.add(turn.text, user_id=uid, timestamp=turn.at)
            assert server.embedding_calls - calls == 2
            if type(store).__name__ == "Neo4jStore":  # the scope lock, the log, the context, resolution, the write
                assert store.round_trips - trips == 5
    finally:
        memory.flush()


def test_add_many_and_a_bad_mode_follow_the_config(server, store, tmp_path):
    from graphmem import ConfigError, Memory

    with pytest.raises(ConfigError, match="add_mode"):
        Memory({"add_mode": "one_shot"}, store=store)
    memory = single_pass_memory(server, store, tmp_path)
    model = Model()
    server.set_handler(model)
    try:
        users = [f"u-{uuid.uuid4().hex[:8]}" for _ in range(2)]
        model.turn, model.user = LIKES[0], SELF
        out = memory.add_many([{"messages": "I like pizza.", "user_id": u} for u in users], workers=1)
        assert out["added"] == 2 and server.calls() == 2
        assert all(memory.get_all(user_id=u)["results"][0]["memory"] == "Likes pizza" for u in users)
    finally:
        memory.flush()


def test_the_fact_prompts_reach_the_single_request(server, store, tmp_path, uid):
    memory = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "h.db"), add_mode="single_pass",
                         custom_fact_extraction_prompt="Only record food preferences.")
    try:
        memory.add("I like pizza.", user_id=uid)
        memory.add("I like tea.", user_id=uid, prompt="Only record drinks.")
        first, second = (r.messages[0]["content"] for r in server.requests)
        assert "Instructions for extract_facts:\nOnly record food preferences." in first
        assert "Only record drinks." in second and "food preferences" not in second  # add(prompt=...) wins, as staged
    finally:
        memory.flush()
