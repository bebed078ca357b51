"""``graphmem demo``: the Desmond and badminton stories, printing the graph after each message.

With a real LLM configured (OPENAI_API_KEY, or GRAPHMEM_LLM_BASE_URL for an OpenAI-compatible
server) the stories run through it. Without one, a local scripted OpenAI-compatible server answers
with the tool calls written below, through the same client and pipeline, and the first line says so.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from graphmem.types import Relation

U = "user_1"  # the demo's user id; "I" and "my" resolve to it

#: (message, scripted replies by tool) — what a good model answers for each message.
STORIES: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "desmond": [
        ("Hi, my name is Desmond.", {
            "extract_facts": {"facts": ["Name is Desmond"]},
            "extract_entities": {"entities": [{"entity": "Desmond", "entity_type": "person"}]},
            "establish_relationships": {"relations": [{"source": "I", "relationship": "has_name", "destination": "Desmond"}]},
        }),
        ("I have a sister.", {
            "extract_facts": {"facts": ["Has a sister"]},
            "extract_entities": {"entities": [{"entity": "sister", "entity_type": "person"}]},
            "establish_relationships": {"relations": [{"source": "I", "relationship": "has_sister", "destination": "sister"}]},
        }),
        ("Her name is Jesica.", {
            "extract_facts": {"facts": ["Sister's name is Jesica"]},
            "extract_entities": {"entities": [{"entity": "sister", "entity_type": "person"}, {"entity": "Jesica", "entity_type": "person"}]},
            "establish_relationships": {"relations": [{"source": "sister", "relationship": "has_name", "destination": "Jesica"}]},
        }),
        ("She has a dog.", {
            "extract_facts": {"facts": ["Sister Jesica has a dog"]},
            "extract_entities": {"entities": [{"entity": "jesica", "entity_type": "person"}, {"entity": "dog", "entity_type": "pet"}]},
            "establish_relationships": {"relations": [{"source": "jesica", "relationship": "has_pet", "destination": "dog"}]},
        }),
    ],
    "badminton": [
        ("I love to play badminton.", {
            "extract_facts": {"facts": ["Loves to play badminton"]},
            "extract_entities": {"entities": [{"entity": "badminton", "entity_type": "activity"}]},
            "establish_relationships": {"relations": [{"source": "I", "relationship": "loves_playing", "destination": "badminton"}]},
        }),
        ("I do not like badminton any more.", {
            "extract_facts": {"facts": ["Does not like badminton any more"]},
            "extract_entities": {"entities": [{"entity": "badminton", "entity_type": "activity"}]},
            "establish_relationships": {"relations": []},
            "delete_graph_memory": {"relations": [{"source": U, "relationship": "loves_playing", "destination": "badminton"}]},
            "update_memory": {"memory": [{"id": "0", "text": "Loves to play badminton", "event": "DELETE"}]},
        }),
    ],
}


def story_handler(stories: dict[str, list[tuple[str, dict[str, Any]]]] = STORIES) -> Callable[[str | None, dict], Any]:
    """A ScriptedLLMServer handler answering each tool from the story message in the request."""
    table = {text: replies for story in stories.values() for text, replies in story}

    def handle(tool: str | None, body: dict) -> Any:
        prompt = str((body.get("messages") or [{}])[-1].get("content", ""))
        if tool == "summarize":
            return {"summary": "The user (Desmond) has a sister, Jesica, who has a dog; the user talked about badminton."}
        if tool == "update_memory":  # the update stage sees facts, not messages: find the story step by its facts
            new_facts = prompt.rsplit("New facts:", 1)[-1]
            for replies in table.values():
                facts = replies.get("extract_facts", {}).get("facts", [])
                if facts and all(f in new_facts for f in facts):
                    # like a model: a scripted decision, else the new facts are added
                    return replies.get("update_memory") or {"memory": [{"id": f"n{i}", "text": f, "event": "ADD"} for i, f in enumerate(facts)]}
            return None
        newest = prompt.rsplit("Newest messages:", 1)[-1]
        for text, replies in table.items():
            if text in newest:
                return replies.get(tool or "")
        return None

    return handle


def _real_llm_configured() -> bool:
    return bool(os.environ.get("OPENAI_API_KEY") or os.environ.get("GRAPHMEM_LLM_BASE_URL"))


def format_graph(relations: list[Relation]) -> str:
    if not relations:
        return "    (empty)"
    lines = []
    for r in relations:
        mark = "" if r.is_current else f"   [invalidated {r.invalid_at:%Y-%m-%d %H:%M}]"
        lines.append(f"    ({r.source}) -[{r.relationship}]-> ({r.destination}){mark}")
    return "\n".join(lines)


def run_demo(
    config: dict[str, Any] | None = None,
    out: Callable[[str], None] = print,
    store_path: Path | None = None,
    store: str | None = None,
    neo4j_url: str | None = None,
    config_path: Path | None = None,
) -> int:
    """Run the stories. ``config`` (Memory.from_config keys) may name the LLM, embedder and store;
    ``store="neo4j"`` puts the graph into Neo4j at ``neo4j_url`` (default the launcher's address),
    so it can be explored in Neo4j Browser (``graphmem browse --user user_1``)."""
    from graphmem.memory import Memory
    from graphmem.testing import ScriptedLLMServer

    cfg: dict[str, Any] = dict(config or {})
    server = None
    if "llm" not in cfg and not _real_llm_configured():
        server = ScriptedLLMServer().start()
        server.set_handler(story_handler())
        out("No LLM configured (OPENAI_API_KEY / GRAPHMEM_LLM_BASE_URL unset): running on SCRIPTED LLM responses "
            f"from a local OpenAI-compatible server at {server.base_url}.")
        cfg["llm"] = {"provider": "openai_compatible", "config": {"base_url": server.base_url, "api_key": "scripted", "model": "scripted"}}
        cfg.setdefault("embedder", {"provider": "hashing", "config": {"dims": 384}})
        # the hashing embedder is lexical: its cosines run lower than a sentence model's
        cfg.setdefault("similar_memory_threshold", 0.25)
    elif "llm" not in cfg:
        base_url = os.environ.get("GRAPHMEM_LLM_BASE_URL")
        model = os.environ.get("GRAPHMEM_LLM_MODEL", "gpt-4.1-mini")
        out(f"Using the LLM at {base_url or 'OpenAI'} ({model}).")
        cfg["llm"] = {"provider": "openai_compatible" if base_url else "openai", "config": {"base_url": base_url, "model": model}}
    tmp = tempfile.TemporaryDirectory(prefix="graphmem-demo-")
    if store == "neo4j":
        cfg["graph_store"] = {"provider": "neo4j", "config": {"url": neo4j_url or "bolt://127.0.0.1:7687"}}
    elif store == "embedded" or "graph_store" not in cfg:
        cfg["graph_store"] = {"provider": "embedded", "config": {"path": str(store_path or Path(tmp.name) / "graph")}}
    cfg.setdefault("history_db_path", str(Path(tmp.name) / "history.db"))
    try:
        with Memory.from_config(cfg) as memory:
            where = cfg["graph_store"].get("config", {}).get("url", "a temporary folder")
            out(f"Store: {cfg['graph_store']['provider']} ({where}); user_id={U!r} (\"I\" and \"my\" resolve to it).")
            scope: dict[str, Any] = {"user_id": U}
            memory.delete_all(**scope)
            for name, story in STORIES.items():
                out(f"\n== {name} story ==")
                for text, _ in story:
                    before = _costs(memory)
                    memory.add(text, **scope)
                    memory.flush()  # a rolling summary may run in the background; count it with its add
                    out(f"\n> {text}    [{_cost_line(before, _costs(memory))}]")
                    rels = memory.store.get_all(_scope(), include_invalidated=True)
                    out(format_graph(rels))
                    facts = [m["memory"] for m in memory.get_all(**scope)["results"]]
                    out("    memories: " + ("; ".join(facts) or "(none)"))
            for question in ("who is my sister?", "do I play badminton?"):
                before = _costs(memory)
                result = memory.search(question, limit=3, **scope)
                found = ", ".join(f"{h['source']} {h['relationship']} {h['destination']}" for h in result["relations"]) or "nothing current"
                found += " | memories: " + ("; ".join(m["memory"] for m in result["results"]) or "none")
                out(f"\nsearch({question!r}) -> {found}    [{_cost_line(before, _costs(memory))}]")
            if cfg["graph_store"]["provider"] == "neo4j":
                out("\n" + browse_hint(cfg["graph_store"], None if store == "neo4j" else config_path))
    finally:
        if server:
            server.stop()
        tmp.cleanup()
    return 0


def browse_hint(graph_store: dict[str, Any], config_path: Path | None) -> str:
    """How to open the demo's graph in Neo4j Browser: ``browse`` reads the store from a config, so the
    command names one (the demo's own --config when that named the Neo4j, else one to write)."""
    if config_path is not None:
        return f"The graph stays in Neo4j: `graphmem browse --user {U} --config {config_path}` opens it in Neo4j Browser."
    url = graph_store.get("config", {}).get("url", "bolt://127.0.0.1:7687")
    store_config = json.dumps({"graph_store": {"provider": "neo4j", "config": {"url": url}}})
    return (f"The graph stays in Neo4j at {url}. To open it in Neo4j Browser, name that store in a config:\n"
            f"  echo '{store_config}' > demo-neo4j.json\n"
            f"  graphmem browse --user {U} --config demo-neo4j.json")


def _costs(memory: Any) -> tuple[int, int, int]:
    return memory.llm.usage.calls, memory.embedder.calls, memory.store.round_trips


def _cost_line(before: tuple[int, int, int], after: tuple[int, int, int]) -> str:
    llm, emb, db = (a - b for a, b in zip(after, before, strict=False))
    return f"LLM calls {llm}, embedding calls {emb}, DB round trips {db}"


def _scope():
    from graphmem.types import Scope

    return Scope.of(user_id=U)
