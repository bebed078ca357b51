"""One conversation through every provider profile, on both stores: the same graph and memories.

The conversation: the user lives in Boston and works at Acme; then moves to Denver (a relation and a
memory retired, the invalidation naming the user "I"); then starts learning the piano (nothing
retired). Each profile (graphmem/testing/providers.py) refuses what its provider refuses and answers
the way it answers; graphmem must end with exactly what it ends with against plain tool calling,
and each kind of refusal may cost at most one request per client.
"""

from __future__ import annotations

import json
import uuid
from collections import Counter

import pytest

from graphmem import Memory
from graphmem.embeddings import HashingEmbedder
from graphmem.testing import ScriptedLLMServer
from graphmem.testing.providers import PROFILES, ProviderProfile
from tests.conftest import TEST_DIMS, make_store

TURNS = [
    ("I live in Boston and I work at Acme.", [("I", "lives_in", "Boston"), ("I", "works_at", "Acme")], ["Lives in Boston", "Works at Acme"]),
    ("I moved to Denver last week.", [("I", "lives_in", "Denver")], ["Lives in Denver"]),
    ("I started learning the piano.", [("I", "learns", "piano")], ["Is learning the piano"]),
]
RETIRE = {"Lives in Denver": ("I", "LIVES_IN", "Boston")}  # new fact -> the triple and memory it ends
OLD_FACT = {"Lives in Denver": "Lives in Boston"}


def conversation_handler(turn: dict[str, int]):
    """Answers every stage of the current turn (the same replies whatever the profile)."""

    def handle(tool: str | None, body: dict) -> dict | None:
        _, relations, facts = TURNS[turn["n"]]
        if tool == "extract_entities":
            return {"entities": [{"entity": d, "entity_type": "thing"} for _, _, d in relations]}
        if tool == "establish_relationships":
            return {"relations": [{"source": s, "relationship": r, "destination": d} for s, r, d in relations]}
        if tool == "extract_facts":
            return {"facts": facts}
        if tool == "delete_graph_memory":
            retire = [RETIRE[f] for f in facts if f in RETIRE]
            return {"relations": [{"source": s, "relationship": r, "destination": d} for s, r, d in retire]}
        if tool == "update_memory":
            return {"memory": _decisions(body, facts)}
        return None

    return handle


def _decisions(body: dict, facts: list[str]) -> list[dict]:
    user = body["messages"][-1]["content"]
    listing = json.loads(user.split("Existing memories:\n", 1)[1].split("\n\nNew facts:", 1)[0])
    out = [{"id": "new", "text": f, "event": "ADD"} for f in facts]
    ending = {OLD_FACT[f] for f in facts if f in OLD_FACT}
    out += [{"id": m["id"], "text": m["text"], "event": "DELETE"} for m in listing if m["text"] in ending]
    return out


def llm_config(profile: ProviderProfile, server: ScriptedLLMServer) -> dict:
    settings = {"model": profile.model, "api_key": "test-key", "max_retries": 1, "retry_wait": 0.01, "timeout": 5, **profile.client_config}
    if profile.azure:
        return {"provider": "azure_openai", "config": {**settings, "azure_endpoint": server.url, "api_version": "2024-10-21"}}
    return {"provider": "openai_compatible", "config": {**settings, "base_url": server.base_url}}


def run_conversation(profile: ProviderProfile, store) -> tuple[dict, list[dict], ScriptedLLMServer, Memory]:
    turn = {"n": 0}
    server = ScriptedLLMServer(profile=profile).start()
    server.set_handler(conversation_handler(turn))
    memory = Memory({"llm": llm_config(profile, server)}, store=store, embedder=HashingEmbedder(dims=TEST_DIMS))
    user = f"conf-{profile.name}-{uuid.uuid4().hex[:8]}"
    results = []
    for i, (text, _, _) in enumerate(TURNS):
        turn["n"] = i
        results.append(memory.add(text, user_id=user, timestamp=f"2026-01-0{i + 1}T12:00:00Z"))
    everything = memory.get_all(user_id=user, include_invalidated=True)
    return everything, results, server, memory


def summary(everything: dict) -> tuple[set, set, set]:
    """Current and retired triples (the user's own node as "USER") and (memory, current) pairs."""
    def triple(r: dict) -> tuple[str, str, str]:
        return tuple("USER" if n.startswith("conf-") else n for n in (r["source"], r["relationship"], r["destination"]))  # type: ignore[return-value]

    current = {triple(r) for r in everything["relations"] if r["invalid_at"] is None}
    retired = {triple(r) for r in everything["relations"] if r["invalid_at"] is not None}
    memories = {(m["memory"], m.get("invalid_at") is None) for m in everything["results"]}
    return current, retired, memories


def reference(store, request, tmp_path) -> tuple:
    """The plain tool-calling profile's outcome, on a fresh store of the same kind."""
    kind = "neo4j" if type(store).__name__ == "Neo4jStore" else "embedded"
    everything, _, server, memory = run_conversation(PROFILES["openai"], make_store(kind, request, tmp_path / "reference"))
    memory.close()
    server.stop()
    return summary(everything)


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_profile_gives_the_plain_graph_and_memories(name: str, store, request, tmp_path) -> None:
    current, retired, memories = reference(store, request, tmp_path)
    everything, results, server, memory = run_conversation(PROFILES[name], store)
    try:
        assert summary(everything) == (current, retired, memories)
        assert ("USER", "LIVES_IN", "Denver") in current and ("USER", "LIVES_IN", "Boston") in retired
        assert ("Lives in Boston", False) in memories and ("Lives in Denver", True) in memories
        assert [r["event"] for r in results[1]["relations"] if r["event"] == "INVALIDATE"] == ["INVALIDATE"]
        assert not [r for r in results[2]["relations"] if r["event"] == "INVALIDATE"]
        assert all(n <= 1 for n in Counter(server.refusals()).values()), server.refusals()
        assert all(r["usage"]["llm_requests"] >= 2 and r["usage"]["prompt_tokens"] > 0 for r in results)
    finally:
        server.stop()
