"""The conformance conversation, run through any provider profile (tests and benchmarks share it).

The user lives in Boston and works at Acme; then moves to Denver (the invalidation answer names the
user "I": a relation and a memory are retired); then starts learning the piano (nothing retired).
The scripted replies are the same for every profile; only how they travel differs.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphmem.embeddings import HashingEmbedder
from graphmem.memory import Memory
from graphmem.stores.base import GraphStore
from graphmem.testing.providers import ProviderProfile
from graphmem.testing.scripted_server import ScriptedLLMServer

Triple = tuple[str, str, str]

TURNS: list[tuple[str, list[Triple], list[str]]] = [
    ("I live in Boston and I work at Acme.", [("I", "lives_in", "Boston"), ("I", "works_at", "Acme")], ["Lives in Boston", "Works at Acme"]),
    ("I moved to Denver last week.", [("I", "lives_in", "Denver")], ["Lives in Denver"]),
    ("I started learning the piano.", [("I", "learns", "piano")], ["Is learning the piano"]),
]
RETIRE = {"Lives in Denver": ("I", "LIVES_IN", "Boston")}  # new fact -> the triple it ends
OLD_FACT = {"Lives in Denver": "Lives in Boston"}  # new fact -> the memory it ends
USER_PREFIX = "conf-"


def conversation_handler(turn: dict[str, int]) -> Callable[[str | None, dict[str, Any]], dict[str, Any] | None]:
    """Answers every stage of the current turn (``turn["n"]``)."""

    def handle(tool: str | None, body: dict[str, Any]) -> dict[str, Any] | None:
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


def _decisions(body: dict[str, Any], facts: list[str]) -> list[dict[str, Any]]:
    """ADD each fact, DELETE the listed memory it ends. The listing is read from the last user turn
    in either mode (staged: before "New facts:"; single_pass: before "Newest messages:")."""
    user = body["messages"][-1]["content"]
    start = user.index("Existing memories:\n") + len("Existing memories:\n")
    listing, _ = json.JSONDecoder().raw_decode(user, start)
    out = [{"id": "new", "text": f, "event": "ADD"} for f in facts]
    ending = {OLD_FACT[f] for f in facts if f in OLD_FACT}
    out += [{"id": m["id"], "text": m["text"], "event": "DELETE"} for m in listing if m["text"] in ending]
    return out


def llm_config(profile: ProviderProfile, server: ScriptedLLMServer) -> dict[str, Any]:
    """The ``llm`` config a user of that provider would write."""
    settings = {"model": profile.model, "api_key": "test-key", "max_retries": 1, "retry_wait": 0.01, "timeout": 5, **profile.client_config}
    if profile.azure:
        return {"provider": "azure_openai", "config": {**settings, "azure_endpoint": server.url, "api_version": "2024-10-21"}}
    return {"provider": "openai_compatible", "config": {**settings, "base_url": server.base_url}}


@dataclass
class ConversationRun:
    everything: dict[str, Any]  # get_all(include_invalidated=True) at the end
    results: list[dict[str, Any]]  # each add's result
    server: ScriptedLLMServer
    memory: Memory
    requests_per_add: list[int]  # chat requests the server received per add, refused ones included
    refused_per_add: list[int]


def run_conversation(profile: ProviderProfile, store: GraphStore, dims: int, add_mode: str = "staged") -> ConversationRun:
    """Start a server with ``profile`` and run the conversation for a fresh user in ``add_mode``
    ("staged" or "single_pass"); the caller stops the server (``run.server.stop()``); closing the
    memory closes ``store`` too (leave it open when the store is shared)."""
    turn = {"n": 0}
    server = ScriptedLLMServer(profile=profile).start()
    server.set_handler(conversation_handler(turn))
    memory = Memory({"llm": llm_config(profile, server), "add_mode": add_mode}, store=store, embedder=HashingEmbedder(dims=dims))
    user = f"{USER_PREFIX}{add_mode}-{profile.name}-{uuid.uuid4().hex[:8]}"
    results, requests, refused = [], [], []
    for i, (text, _, _) in enumerate(TURNS):
        turn["n"] = i
        before, refused_before = server.calls(), len(server.refusals())
        results.append(memory.add(text, user_id=user, timestamp=f"2026-01-0{i + 1}T12:00:00Z"))
        requests.append(server.calls() - before)
        refused.append(len(server.refusals()) - refused_before)
    everything = dict(memory.get_all(user_id=user, include_invalidated=True))
    return ConversationRun(everything, results, server, memory, requests, refused)


def summary(everything: dict[str, Any]) -> tuple[set[Triple], set[Triple], set[tuple[str, bool]]]:
    """Current and retired triples (the user's own node as "USER") and (memory, current) pairs."""

    def triple(r: dict[str, Any]) -> Triple:
        s, rel, d = (str(r["source"]), str(r["relationship"]), str(r["destination"]))
        return ("USER" if s.startswith(USER_PREFIX) else s, rel, "USER" if d.startswith(USER_PREFIX) else d)

    current = {triple(r) for r in everything["relations"] if r["invalid_at"] is None}
    retired = {triple(r) for r in everything["relations"] if r["invalid_at"] is not None}
    memories = {(str(m["memory"]), m.get("invalid_at") is None) for m in everything["results"]}
    return current, retired, memories
