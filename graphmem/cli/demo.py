"""``graphmem demo``: the Desmond and badminton stories, printing the graph after each message.

With a real LLM configured (OPENAI_API_KEY, or GRAPHMEM_LLM_BASE_URL for an OpenAI-compatible
server) the stories run through it. Without one, a local scripted OpenAI-compatible server answers
with the tool calls written below, through the same client and pipeline, and the first line says so.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphmem.types import Relation, Scope

if TYPE_CHECKING:
    from graphmem.testing import ScriptedLLMServer

U = "user_1"  # the demo's user id in a store of its own; "I" and "my" resolve to whichever user runs it

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
            # "I", as a model says it: it resolves to whoever is speaking, so the stories fit any user id
            "delete_graph_memory": {"relations": [{"source": "I", "relationship": "loves_playing", "destination": "badminton"}]},
            "update_memory": {"memory": [{"id": "0", "text": "Loves to play badminton", "event": "DELETE"}]},
        }),
    ],
}


def story_handler(stories: dict[str, list[tuple[str, dict[str, Any]]]] = STORIES) -> Callable[[str | None, dict[str, Any]], Any]:
    """A ScriptedLLMServer handler answering each tool from the story message in the request."""
    table = {text: replies for story in stories.values() for text, replies in story}

    def handle(tool: str | None, body: dict[str, Any]) -> Any:
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
    ``store="neo4j"`` puts the graph into Neo4j: ``neo4j_url``, else the config's Neo4j store, else
    the launcher's address; so it can be explored in Neo4j Browser (``graphmem browse``).

    The demo deletes nothing: in a store it made itself (a temporary folder) the user is ``user_1``;
    in a store the user named, the stories go to a fresh user id (printed), so nobody's data is
    touched."""
    from graphmem.llm.usage import format_usage
    from graphmem.memory import Memory

    cfg: dict[str, Any] = dict(config or {})
    tmp = tempfile.TemporaryDirectory(prefix="graphmem-demo-")
    own_path = Path(tmp.name) / "graph"
    cfg["graph_store"] = _demo_store(cfg.get("graph_store"), store, neo4j_url, store_path or own_path)
    own_store = cfg["graph_store"].get("config", {}).get("path") == str(own_path)  # a fresh folder of its own
    user = U if own_store else f"demo-{uuid.uuid4().hex[:8]}"
    stories = STORIES
    demo_embedder = "embedder" not in cfg
    server = _choose_llm(cfg, stories, out)
    cfg.setdefault("history_db_path", str(Path(tmp.name) / "history.db"))
    try:
        found_dims = _fit_neo4j_dims(cfg, demo_embedder, out)
        with _opened(Memory, cfg, found_dims) as memory:
            where = cfg["graph_store"].get("config", {}).get("url", "a temporary folder")
            out(f"Store: {cfg['graph_store']['provider']} ({where}); user_id={user!r} (\"I\" and \"my\" resolve to it).")
            scope: dict[str, Any] = {"user_id": user}
            _tell(memory, stories, user, out)
            _ask(memory, scope, out)
            out("\nTokens per stage (the server's own counts):\n" + format_usage(memory.usage()))
            if cfg["graph_store"]["provider"] == "neo4j":
                # browse reads the store from a config: the demo's own --config when the demo used its store
                named = config_path if (config or {}).get("graph_store") == cfg["graph_store"] else None
                out("\n" + browse_hint(cfg["graph_store"], named, user))
    finally:
        if server:
            server.stop()
        tmp.cleanup()
    return 0


def _fit_neo4j_dims(cfg: dict[str, Any], demo_embedder: bool, out: Callable[[str], None]) -> int | None:
    """A Neo4j database holds embeddings of one size (its vector indexes): the demo's own hashing
    embedder takes the database's size; returns that size (None: not Neo4j, or no schema yet)."""
    if cfg["graph_store"]["provider"] != "neo4j":
        return None
    from graphmem.stores.neo4j.prewarm import database_dims

    settings = cfg["graph_store"].get("config", {})
    found = database_dims(settings["url"], settings.get("username"), settings.get("password"), settings.get("database"))
    embedder = cfg.get("embedder") or {}
    if found is not None and demo_embedder and embedder.get("provider") == "hashing" and embedder["config"]["dims"] != found:
        cfg["embedder"] = {"provider": "hashing", "config": {"dims": found}}
        out(f"The Neo4j database holds {found}-dimensional embeddings: the demo's hashing embedder makes {found} too.")
    return found


def _opened(memory_class: Any, cfg: dict[str, Any], found_dims: int | None) -> Any:
    """The demo's Memory; a Neo4j whose embeddings are of another size than the configured embedder's
    is refused with the ways on (the database keeps the embedder it was built with)."""
    from graphmem.errors import ConfigError

    try:
        return memory_class.from_config(cfg)
    except ConfigError as exc:
        if found_dims is None or "dimensions" not in str(exc):
            raise
        url = cfg["graph_store"]["config"]["url"]
        raise ConfigError(
            f"{exc}\nThe database at {url} holds {found_dims}-dimensional embeddings from another embedder. To run the demo: "
            "point it at another database (graphmem demo --store neo4j --neo4j-url bolt://HOST:PORT), or configure the "
            f"embedder that built this one (--config FILE naming it), {_scripted_way(cfg)}or keep it in a temporary folder "
            "(graphmem demo --store embedded)."
        ) from exc


def _scripted_way(cfg: dict[str, Any]) -> str:
    if cfg.get("embedder"):  # the config names an embedder: the scripted run keeps it too
        return ""
    return ("or run it on its scripted model (OPENAI_API_KEY and GRAPHMEM_LLM_BASE_URL unset: its hashing embedder "
            "takes the database's size), ")


def _choose_llm(cfg: dict[str, Any], stories: dict[str, list[tuple[str, dict[str, Any]]]],
                out: Callable[[str], None]) -> ScriptedLLMServer | None:
    """The configured LLM, else a real one named by the environment, else a scripted server (returned,
    to be stopped) answering the stories."""
    from graphmem.testing import ScriptedLLMServer

    server: ScriptedLLMServer | None = None
    if "llm" not in cfg and not _real_llm_configured():
        server = ScriptedLLMServer().start()
        server.set_handler(story_handler(stories))
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
    return server


def _tell(memory: Any, stories: dict[str, list[tuple[str, dict[str, Any]]]], user: str, out: Callable[[str], None]) -> None:
    """Each story message by message, with the graph, the memories and the cost after each."""
    scope: dict[str, Any] = {"user_id": user}
    for name, story in stories.items():
        out(f"\n== {name} story ==")
        for text, _ in story:
            before = _costs(memory)
            memory.add(text, **scope)
            memory.flush()  # a rolling summary may run in the background; count it with its add
            out(f"\n> {text}    [{_cost_line(before, _costs(memory))}]")
            rels = memory.store.get_all(Scope.of(user_id=user), include_invalidated=True)
            out(format_graph(rels))
            facts = [m["memory"] for m in memory.get_all(**scope)["results"]]
            out("    memories: " + ("; ".join(facts) or "(none)"))


def _ask(memory: Any, scope: dict[str, Any], out: Callable[[str], None]) -> None:
    """Two questions the stories answer, with what each search found and cost."""
    for question in ("who is my sister?", "do I play badminton?"):
        before = _costs(memory)
        result = memory.search(question, limit=3, **scope)
        found = ", ".join(f"{h['source']} {h['relationship']} {h['destination']}" for h in result["relations"]) or "nothing current"
        found += " | memories: " + ("; ".join(m["memory"] for m in result["results"]) or "none")
        out(f"\nsearch({question!r}) -> {found}    [{_cost_line(before, _costs(memory))}]")


def browse_hint(graph_store: dict[str, Any], config_path: Path | None, user: str = U) -> str:
    """How to open the demo's graph in Neo4j Browser: ``browse`` reads the store from a config, so the
    command names one (the demo's own --config when that named the Neo4j, else one to write)."""
    if config_path is not None:
        return f"The graph stays in Neo4j: `graphmem browse --user {user} --config {config_path}` opens it in Neo4j Browser."
    url = graph_store.get("config", {}).get("url", "bolt://127.0.0.1:7687")
    store_config = json.dumps({"graph_store": {"provider": "neo4j", "config": {"url": url}}})
    return (f"The graph stays in Neo4j at {url}. To open it in Neo4j Browser, name that store in a config:\n"
            f"  echo '{store_config}' > demo-neo4j.json\n"
            f"  graphmem browse --user {user} --config demo-neo4j.json")


def _costs(memory: Any) -> tuple[int, int, int]:
    return memory.llm.usage.calls, memory.embedder.calls, memory.store.round_trips


def _cost_line(before: tuple[int, int, int], after: tuple[int, int, int]) -> str:
    llm, emb, db = (a - b for a, b in zip(after, before, strict=False))
    return f"LLM calls {llm}, embedding calls {emb}, DB round trips {db}"


def _demo_store(configured: Any, store: str | None, neo4j_url: str | None, tmp_path: Path) -> dict[str, Any]:
    """The graph_store config the demo runs on: the one it was given, never a different address."""
    if store == "neo4j":
        given = configured if isinstance(configured, dict) and configured.get("provider") == "neo4j" else {}
        settings = dict(given.get("config") or {})
        if neo4j_url:
            settings["url"] = neo4j_url
        settings.setdefault("url", "bolt://127.0.0.1:7687")
        return {**given, "provider": "neo4j", "config": settings}
    if store == "embedded" or not configured:
        return {"provider": "embedded", "config": {"path": str(tmp_path)}}
    return dict(configured)
