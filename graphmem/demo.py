"""``graphmem demo``: the Desmond and badminton stories, printing the graph after each message.

With a real LLM configured (OPENAI_API_KEY, or GRAPHMEM_LLM_BASE_URL for an OpenAI-compatible
server) the stories run through it. Without one, a local scripted OpenAI-compatible server answers
with the tool calls written below, through the same client and pipeline, and the first line says so.
"""

from __future__ import annotations

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
            "extract_entities": {"entities": [{"entity": "Desmond", "entity_type": "person"}]},
            "establish_relationships": {"relations": [{"source": "I", "relationship": "has_name", "destination": "Desmond"}]},
        }),
        ("I have a sister.", {
            "extract_entities": {"entities": [{"entity": "sister", "entity_type": "person"}]},
            "establish_relationships": {"relations": [{"source": "I", "relationship": "has_sister", "destination": "sister"}]},
        }),
        ("Her name is Jesica.", {
            "extract_entities": {"entities": [{"entity": "sister", "entity_type": "person"}, {"entity": "Jesica", "entity_type": "person"}]},
            "establish_relationships": {"relations": [{"source": "sister", "relationship": "has_name", "destination": "Jesica"}]},
        }),
        ("She has a dog.", {
            "extract_entities": {"entities": [{"entity": "jesica", "entity_type": "person"}, {"entity": "dog", "entity_type": "pet"}]},
            "establish_relationships": {"relations": [{"source": "jesica", "relationship": "has_pet", "destination": "dog"}]},
        }),
    ],
    "badminton": [
        ("I love to play badminton.", {
            "extract_entities": {"entities": [{"entity": "badminton", "entity_type": "activity"}]},
            "establish_relationships": {"relations": [{"source": "I", "relationship": "loves_playing", "destination": "badminton"}]},
        }),
        ("I do not like badminton any more.", {
            "extract_entities": {"entities": [{"entity": "badminton", "entity_type": "activity"}]},
            "establish_relationships": {"relations": []},
            "delete_graph_memory": {"relations": [{"source": U, "relationship": "loves_playing", "destination": "badminton"}]},
        }),
    ],
}


def story_handler(stories: dict[str, list[tuple[str, dict[str, Any]]]] = STORIES) -> Callable[[str, dict], Any]:
    """A ScriptedLLMServer handler answering each tool from the story message in the request."""
    table = {text: replies for story in stories.values() for text, replies in story}

    def handle(tool: str, body: dict) -> Any:
        prompt = str((body.get("messages") or [{}])[-1].get("content", ""))
        newest = prompt.rsplit("Newest messages:", 1)[-1]
        for text, replies in table.items():
            if text in newest:
                return replies.get(tool)
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


def run_demo(config: dict[str, Any] | None = None, out: Callable[[str], None] = print, store_path: Path | None = None) -> int:
    from graphmem.memory import Memory
    from graphmem.testing import ScriptedLLMServer

    server = None
    cfg: dict[str, Any] = dict(config or {})
    if config is None and not _real_llm_configured():
        server = ScriptedLLMServer().start()
        server.set_handler(story_handler())
        out("No LLM configured (OPENAI_API_KEY / GRAPHMEM_LLM_BASE_URL unset): running on SCRIPTED LLM responses "
            f"from a local OpenAI-compatible server at {server.base_url}.")
        cfg["llm"] = {"provider": "openai_compatible", "config": {"base_url": server.base_url, "api_key": "scripted", "model": "scripted"}}
        cfg["embedder"] = {"provider": "hashing", "config": {}}
    elif config is None:
        base_url = os.environ.get("GRAPHMEM_LLM_BASE_URL")
        out(f"Using the LLM at {base_url or 'OpenAI'} ({os.environ.get('GRAPHMEM_LLM_MODEL', 'gpt-4.1-mini')}).")
        cfg["llm"] = {"provider": "openai_compatible" if base_url else "openai",
                      "config": {"base_url": base_url, "model": os.environ.get("GRAPHMEM_LLM_MODEL", "gpt-4.1-mini")}}
    tmp = None
    if "graph_store" not in cfg:
        tmp = tempfile.TemporaryDirectory(prefix="graphmem-demo-")
        cfg["graph_store"] = {"provider": "embedded", "config": {"path": str(store_path or Path(tmp.name) / "graph")}}
    try:
        with Memory.from_config(cfg) as memory:
            out(f"Store: {cfg['graph_store']['provider']}; user_id={U!r} (\"I\" and \"my\" resolve to it).")
            scope = {"user_id": U}
            memory.delete_all(**scope)
            for name, story in STORIES.items():
                out(f"\n== {name} story ==")
                for text, _ in story:
                    before = _costs(memory)
                    memory.add(text, **scope)
                    out(f"\n> {text}    [{_cost_line(before, _costs(memory))}]")
                    rels = memory.store.get_all(_scope(), include_invalidated=True)
                    out(format_graph(rels))
            for question in ("who is my sister?", "do I play badminton?"):
                before = _costs(memory)
                hits = memory.search(question, limit=3, **scope)["relations"]
                found = ", ".join(f"{h['source']} {h['relationship']} {h['destination']}" for h in hits) or "nothing current"
                out(f"\nsearch({question!r}) -> {found}    [{_cost_line(before, _costs(memory))}]")
    finally:
        if server:
            server.stop()
        if tmp:
            tmp.cleanup()
    return 0


def _costs(memory: Any) -> tuple[int, int, int]:
    return memory.llm.usage.calls, memory.embedder.calls, memory.store.round_trips


def _cost_line(before: tuple[int, int, int], after: tuple[int, int, int]) -> str:
    llm, emb, db = (a - b for a, b in zip(after, before))
    return f"LLM calls {llm}, embedding calls {emb}, DB round trips {db}"


def _scope():
    from graphmem.types import Scope

    return Scope.of(user_id=U)
