"""The ``graphmem`` command line.

    graphmem add "I moved to Denver" --user alice [--timestamp 2024-06-15] [--metadata JSON] [--no-infer]
    graphmem search "where do I live?" --user alice [--limit 10] [--as-of 2023-12-01] [--known-at T]
                    [--filter KEY=VALUE]... [--threshold 0.3] [--json]
    graphmem get-all --user alice [--include-invalidated] [--json]      # memories and relations
    graphmem get MEMORY_ID | update MEMORY_ID TEXT | delete MEMORY_ID
    graphmem timeline Boston --user alice
    graphmem history MEMORY_ID
    graphmem delete-all --user alice --yes
    graphmem init [--profile offline|openai|ollama] [--global]    # a commented config file
    graphmem demo
    graphmem fake-llm [--port 8790] [--script FILE]              # a fake model: GRAPHMEM_BASE_URL=http://127.0.0.1:8790/v1
    graphmem browse --user alice [--query history] [--open]
    graphmem export --user alice --format graphml|json|cypher [--output FILE] [--as-user bob]
    graphmem load alice.json [--as-user bob]                      # a JSON export into the configured store
    graphmem serve --keys keys.json [--port 8000]
    graphmem mcp --user alice [--http --port 8765]
    graphmem purge | forget --user alice [--entity NAME] --yes     # retention and erasure
    graphmem import FILE [--no-infer] [--format jsonl|locomo] [--quiet]
    graphmem import-mem0 ~/.mem0/history.db [--memories export.json] [--user alice] [--reextract]
    graphmem doctor [--config FILE]                                  # check the model and embedder

Configuration comes from ``--config FILE`` (a JSON file with Memory.from_config keys; ``//`` comment
lines allowed), else GRAPHMEM_CONFIG, else ./graphmem.json, else $GRAPHMEM_HOME/config.json
(``graphmem init`` writes one); without any, the defaults of ``Memory()``.
Exit codes: 0 ok, 1 graphmem error (message on stderr), 2 usage error (a missing scope, a bad value
such as ``--limit 0`` or a date that is not ISO-8601, or input the library refuses as invalid).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphmem.errors import GraphMemError, InvalidInputError, NotFoundError

if TYPE_CHECKING:
    from graphmem.memory import Memory


def _scope_args(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("scope (at least one)")
    g.add_argument("--user", dest="user_id", help="user id")
    g.add_argument("--agent", dest="agent_id", help="agent id")
    g.add_argument("--run", dest="run_id", help="run id")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", type=Path, help="JSON config file (default: $GRAPHMEM_CONFIG, ./graphmem.json, $GRAPHMEM_HOME/config.json)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or (``command``, one of its commands) only that command's parser:
    ``graphmem search ...`` does not import the modules behind the other commands."""
    from graphmem import __version__

    parser = argparse.ArgumentParser(prog="graphmem", description="Knowledge-graph memory for LLM agents.")
    parser.add_argument("--version", action="version", version=f"graphmem {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    registrars = [REGISTRARS[command]] if command in REGISTRARS else list(dict.fromkeys(REGISTRARS.values()))
    for register in registrars:
        register(sub)
    return parser


# --- argument types: a bad value is a usage error (exit 2) before anything runs -----------------


def _result_limit(text: str) -> int:
    """``--limit``: 1 to the table's RESULT_LIMIT, as on every door (refused before the store is opened)."""
    from graphmem.schema.limits import RESULT_LIMIT

    value = _positive_int(text)
    if value > RESULT_LIMIT:
        raise argparse.ArgumentTypeError(f"must be at most {RESULT_LIMIT}, got {value}")
    return value


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _iso_time(text: str) -> str:
    """An ISO-8601 date/time; argparse's message names the option ("argument --as-of: ...")."""
    from graphmem.types import parse_time

    try:
        parse_time(text, field_name="the date")
    except (GraphMemError, ValueError, OverflowError) as exc:
        reason = "" if "is not ISO-8601" in str(exc) else f" ({exc})"
        raise argparse.ArgumentTypeError(f"not an ISO-8601 date/time: {text!r}{reason} (e.g. 2024-06-15 or 2024-06-15T09:30:00Z)") from None
    return text


def _json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError("must be a JSON object, e.g. '{\"source\": \"chat\"}'")
    return value


def _filter(text: str) -> tuple[str, Any]:
    """KEY=VALUE (a string) or KEY:=JSON (a number, a boolean, an operator dict: graphmem.schema.filters)."""
    key, sep, value = text.partition("=")
    if not sep or not key or key == ":":
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE or KEY:=JSON, got {text!r}")
    if not key.endswith(":"):
        return key, value
    try:
        return key[:-1], json.loads(value)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(f"{key[:-1]}: not JSON: {exc}") from None


# --- memory commands --------------------------------------------------------------------------


def _add_add(sub: Any) -> None:
    p = sub.add_parser("add", help="extract and store memories from a message", description="Extract memory facts, entities and relations from MESSAGE and merge them into the scope's memory and graph (--no-infer: store MESSAGE verbatim as one memory, no LLM call).")
    p.add_argument("message", help="the message text ('-' reads stdin)")
    p.add_argument("--role", default="user", choices=["user", "assistant"], help="role of the message (default user)")
    p.add_argument("--timestamp", type=_iso_time, help="when the message was said, ISO-8601 (default now)")
    p.add_argument("--metadata", type=_json_object, help="JSON object stored with the new memories, e.g. '{\"source\": \"chat\"}'")
    p.add_argument("--no-infer", dest="infer", action="store_false", help="store the message as is; no LLM call")
    _scope_args(p)
    _common(p)


def _add_search(sub: Any) -> None:
    p = sub.add_parser("search", help="search a scope's memories and relations", description="Memories and relations relevant to QUERY (no LLM call).")
    p.add_argument("query")
    p.add_argument("--limit", type=_result_limit, default=10, help="maximum results (default 10, at most 10,000)")
    p.add_argument("--preset", choices=["hybrid", "hybrid_rrf", "vector", "bm25"], default="hybrid", help="ranking preset")
    p.add_argument("--as-of", type=_iso_time, help="event time, ISO-8601: what was true then (default now)")
    p.add_argument("--known-at", type=_iso_time, help="transaction time, ISO-8601: what graphmem believed then")
    p.add_argument("--filter", dest="filters", action="append", type=_filter, metavar="KEY=VALUE",
                   help="mem0 filter on metadata (repeatable; KEY:=JSON for numbers, booleans or an operator dict such as {\"gte\": 2})")
    p.add_argument("--threshold", type=float, help="minimum cosine similarity of a memory")
    _scope_args(p)
    _common(p)


def _add_get_all(sub: Any) -> None:
    p = sub.add_parser("get-all", help="list a scope's memories and relations", description="Every memory and every current relation of the scope, oldest first (--include-invalidated: retired relations too).")
    p.add_argument("--include-invalidated", action="store_true", help="include retired relations (history)")
    p.add_argument("--limit", type=_result_limit, default=100, help="maximum results (default 100, at most 10,000)")
    _scope_args(p)
    _common(p)


def _add_memory_commands(sub: Any) -> None:
    p = sub.add_parser("get", help="show one memory", description="The memory MEMORY_ID (its text, scope, metadata and times).")
    p.add_argument("memory_id")
    _common(p)
    p = sub.add_parser("update", help="replace a memory's text", description="Replace the text of memory MEMORY_ID with TEXT (re-embedded; recorded in its history).")
    p.add_argument("memory_id")
    p.add_argument("text", help="the new text ('-' reads stdin)")
    _common(p)
    p = sub.add_parser("delete", help="delete one memory", description="Remove the memory MEMORY_ID for good; its history keeps a DELETE event.")
    p.add_argument("memory_id")
    _common(p)


def _add_timeline_history_delete_all(sub: Any) -> None:
    p = sub.add_parser("timeline", help="every version of the relations of an entity", description="Every version of every relation touching ENTITY, in event-time order, with both time axes. ENTITY may be 'me' for the scope's own node.")
    p.add_argument("entity")
    _scope_args(p)
    _common(p)

    p = sub.add_parser("history", help="the change history of a memory", description="Every change (ADD, UPDATE, DELETE) of the memory MEMORY_ID, oldest first.")
    p.add_argument("memory_id")
    _common(p)

    p = sub.add_parser("delete-all", help="delete everything of a scope", description="Remove every entity, relation, memory and logged message of the scope.")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    _scope_args(p)
    _common(p)


def _add_demo(sub: Any) -> None:
    p = sub.add_parser("demo", help="run the Desmond and badminton stories", description="Run the demo stories, printing the graph and the cost of each add after each message. Uses scripted LLM answers when no LLM is configured (OPENAI_API_KEY / GRAPHMEM_LLM_BASE_URL) and the config names none; the graph goes to a temporary embedded store unless --store neo4j.")
    p.add_argument("--config", type=Path, help="JSON config file (llm, embedder, graph_store keys)")
    p.add_argument("--store", choices=["embedded", "neo4j"], help="where the demo graph goes (default: the config's store, else a temporary embedded store)")
    p.add_argument("--neo4j-url", help="Neo4j URL for --store neo4j (default bolt://127.0.0.1:7687, the launcher's)")


# --- servers (graphmem.server.commands) ---------------------------------------------------------


def _add_servers(sub: Any) -> None:
    from graphmem.server.commands import add_parsers

    add_parsers(sub)


def _add_lifecycle(sub: Any) -> None:
    from graphmem.cli.lifecycle import add_parsers

    add_parsers(sub)


def _add_import_mem0(sub: Any) -> None:
    from graphmem.compat.mem0_import import add_cli

    add_cli(sub, _scope_args)


# --- browse and export (graphmem.browser.browse, graphmem.lifecycle.export) -------------------------------


#: graphmem.lifecycle.export.FORMATS, repeated so ``graphmem --help`` does not load the exporter (a test keeps them equal)
EXPORT_FORMATS = ("graphml", "json", "cypher")


def _add_browse_and_export(sub: Any) -> None:
    from graphmem.browser.queries import VIEWS

    p = sub.add_parser("browse", help="open a scope's graph in Neo4j Browser", description="Make sure a Neo4j holds the scope's graph (the configured Neo4j store; with the embedded store, a display copy in a Neo4j launcher server of its own) and print a Neo4j Browser URL with a saved view pre-filled.")
    p.add_argument("--query", default="user_graph", choices=VIEWS, help="saved view to pre-fill (default user_graph)")
    p.add_argument("--entity", help="entity name or id (entity_neighbourhood, entity_memories)")
    p.add_argument("--from", dest="date_from", help="ISO-8601 start, inclusive (changes)")
    p.add_argument("--to", dest="date_to", help="ISO-8601 end, exclusive (changes)")
    p.add_argument("--relation", help="relation id, from the history view (provenance)")
    p.add_argument("--browser-url", help="Neo4j Browser address (default: where the server says it serves HTTP, else port 7474)")
    p.add_argument("--open", action="store_true", help="also open the URL in a web browser")
    # browse.DISPLAY_PORTS, repeated so `graphmem --help` does not load browse (a test keeps them equal):
    # display copies get a launcher server of their own, never the one a Neo4j store's default url names
    p.add_argument("--bolt-port", type=_positive_int, default=7688, help="embedded store: the bolt port of the launcher's Neo4j that holds display copies (default 7688; never a Neo4j holding a store's data)")
    p.add_argument("--http-port", type=_positive_int, default=7475, help="embedded store: that Neo4j's HTTP (Browser) port (default 7475)")
    _scope_args(p)
    p.add_argument("--config", type=Path, help="JSON config file (default: $GRAPHMEM_CONFIG, ./graphmem.json, $GRAPHMEM_HOME/config.json)")

    p = sub.add_parser("export", help="export a scope's graph", description="Write the scope's graph as GraphML (Gephi, yEd), JSON, or a Cypher script that loads it into another Neo4j; reads either store.")
    p.add_argument("--format", required=True, choices=EXPORT_FORMATS, help="output format")
    p.add_argument("--output", type=Path, help="file to write (default stdout)")
    p.add_argument("--include-invalidated", action="store_true", help="include retired relations (history)")
    g = p.add_argument_group("write the copy as another scope (its own node renamed, fresh ids)")
    g.add_argument("--as-user", help="user id to write instead")
    g.add_argument("--as-agent", help="agent id to write instead")
    g.add_argument("--as-run", help="run id to write instead")
    _scope_args(p)
    p.add_argument("--config", type=Path, help="JSON config file (default: $GRAPHMEM_CONFIG, ./graphmem.json, $GRAPHMEM_HOME/config.json)")


def _add_doctor(sub: Any) -> None:
    from graphmem.cli.doctor import add_parser

    add_parser(sub)


def _add_init(sub: Any) -> None:
    from graphmem.cli.init_config import add_parser

    add_parser(sub)


def _add_fake_llm(sub: Any) -> None:
    from graphmem.testing.command import add_parser

    add_parser(sub)


def _add_reindex(sub: Any) -> None:
    from graphmem.lifecycle.reindex import add_parser

    add_parser(sub)


def _add_load(sub: Any) -> None:
    from graphmem.lifecycle.load import add_parser

    add_parser(sub)


def _add_import(sub: Any) -> None:
    from graphmem.ingest.importer import add_parser

    add_parser(sub)


def _run_import(ns: argparse.Namespace) -> int:
    from graphmem.ingest.importer import run

    return run(ns, load_config(ns.config))


def _run_browse_or_export(ns: argparse.Namespace) -> int:
    if ns.command == "browse":
        from graphmem.browser.browse import run
    else:
        from graphmem.lifecycle.export import run
    return run(ns, load_config(ns.config))


#: each command's parser registrar, in the order ``graphmem --help`` lists them (a registrar may add several)
REGISTRARS: dict[str, Callable[[Any], None]] = {
    "add": _add_add, "search": _add_search, "get-all": _add_get_all,
    "get": _add_memory_commands, "update": _add_memory_commands, "delete": _add_memory_commands,
    "timeline": _add_timeline_history_delete_all, "history": _add_timeline_history_delete_all,
    "delete-all": _add_timeline_history_delete_all, "demo": _add_demo,
    "browse": _add_browse_and_export, "export": _add_browse_and_export, "serve": _add_servers, "mcp": _add_servers,
    "purge": _add_lifecycle, "forget": _add_lifecycle, "import": _add_import, "import-mem0": _add_import_mem0,
    "load": _add_load, "reindex": _add_reindex, "fake-llm": _add_fake_llm, "init": _add_init, "doctor": _add_doctor,
}


def load_config(path: Path | None, discover: bool = True) -> dict[str, Any] | None:
    """The config of a command: --config, $GRAPHMEM_CONFIG, then (``discover``) ./graphmem.json and
    $GRAPHMEM_HOME/config.json (graphmem.cli.init_config); ``//`` comment lines allowed."""
    from graphmem.cli.init_config import find_config, read_config

    if not discover:
        path = path or (Path(os.environ["GRAPHMEM_CONFIG"]) if os.environ.get("GRAPHMEM_CONFIG") else None)
    else:
        path = find_config(path)
    return None if path is None else read_config(path)


#: Commands that only read: on the embedded store they open it read-only, so they work while
#: another process (an app, `graphmem serve`) owns the folder.
READ_COMMANDS = ("search", "get-all", "timeline", "history", "get")


def read_only(config: dict[str, Any] | None) -> dict[str, Any]:
    """The config with the embedded store opened read-only (the last durable state, no lock taken)."""
    config = dict(config or {})
    store = dict(config.get("graph_store") or {})
    if store.get("provider", "embedded") == "embedded":
        store["config"] = {**(store.get("config") or {}), "read_only": True}
        config["graph_store"] = store
    return config


def _scope(ns: argparse.Namespace) -> dict[str, Any]:
    return {key: getattr(ns, key, None) for key in ("user_id", "agent_id", "run_id")}


def _print_relations(result: Mapping[str, Any], as_json: bool) -> None:
    if as_json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    if "results" in result and not result["results"]:
        print("(no memories)")
    for m in result.get("results", []):
        extra = f"  score={m['score']:.4f}" if "score" in m else ""
        event = f"{m['event']:<10} " if "event" in m else ""
        print(f"{event}memory {m['id']}: {m['memory']}{extra}")
    rels = result.get("relations", [])
    if not rels:
        print("(no relations)")
    for r in rels:
        extra = f"  score={r['score']:.4f}" if "score" in r else ""
        if r.get("invalid_at"):
            extra += f"  (valid until {r.get('invalid_at')})"
        if r.get("expired_at"):
            extra += f"  [retired {r.get('expired_at')}]"
        event = f"{r['event']:<10} " if "event" in r else ""
        print(f"{event}{r['source']} -[{r['relationship']}]-> {r['destination']}  (valid from {r.get('valid_at')}){extra}")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    parser = build_parser(args[0] if args else None)
    ns = parser.parse_args(args)
    if hasattr(ns, "user_id") and not any(_scope(ns).values()):
        parser.error(f"{ns.command}: give at least one of --user, --agent, --run")  # exits 2
    from graphmem.errors.redact import guard_process_logs

    guard_process_logs()  # whatever a command logs (an HTTP client's request URLs too) shows no credentials
    try:
        return _run(ns)
    except InvalidInputError as exc:  # bad arguments the parser could not see (ids, filters, metadata)
        print(f"graphmem: error: {exc}", file=sys.stderr)
        return 2
    except GraphMemError as exc:
        print(f"graphmem: error: {exc}", file=sys.stderr)
        return 1


def _run(ns: argparse.Namespace) -> int:
    """One command: those that open their own tools, else one of the commands run on a Memory."""
    standalone = _run_standalone(ns)
    if standalone is not None:
        return standalone
    from graphmem.memory import Memory

    config = load_config(ns.config)
    if ns.command in READ_COMMANDS:
        config = read_only(config)
    config = {"warm_up": False, **(config or {})}  # one command, then exit: nothing to prepare ahead
    with Memory(config) as memory:
        return _MEMORY_COMMANDS[ns.command](memory, ns)


def _run_standalone(ns: argparse.Namespace) -> int | None:
    """The commands that need no Memory of the configured store (None: not one of them)."""
    if ns.command == "demo":
        from graphmem.cli.demo import run_demo

        return run_demo(load_config(ns.config, discover=False), store=ns.store, neo4j_url=ns.neo4j_url, config_path=ns.config)
    if ns.command in ("browse", "export"):
        return _run_browse_or_export(ns)
    if ns.command in ("serve", "mcp"):
        from graphmem.server import commands

        return commands.run(ns, load_config(ns.config))
    if ns.command in ("purge", "forget"):
        from graphmem.cli.lifecycle import run as run_lifecycle

        return run_lifecycle(ns, load_config(ns.config))
    if ns.command == "import":
        return _run_import(ns)
    if ns.command == "init":
        from graphmem.cli.init_config import run as run_init

        return run_init(ns)
    if ns.command == "fake-llm":
        from graphmem.testing.command import run as run_fake

        return run_fake(ns)
    if ns.command == "load":
        from graphmem.lifecycle.load import run as run_load

        return run_load(ns, load_config(ns.config))
    if ns.command == "reindex":
        from graphmem.lifecycle.reindex import run as run_reindex

        return run_reindex(ns, load_config(ns.config))
    if ns.command == "doctor":
        from graphmem.cli.doctor import run as run_doctor

        return run_doctor(ns, load_config(ns.config))
    if ns.command == "import-mem0":
        from graphmem.compat.mem0_import import run

        return run(ns, load_config(ns.config))
    return None


def _text(value: str) -> str:
    return sys.stdin.read() if value == "-" else value


def _cmd_add(memory: Memory, ns: argparse.Namespace) -> int:
    message = {"role": ns.role, "content": _text(ns.message)}
    result = memory.add(message, timestamp=ns.timestamp, metadata=ns.metadata, infer=ns.infer, **_scope(ns))
    if not ns.json:  # the id provenance, the Browser's provenance view and history rows know this add by
        print(f"add {result['add_id']}")
    _print_relations(result, ns.json)
    return 0


def _cmd_search(memory: Memory, ns: argparse.Namespace) -> int:
    filters = dict(ns.filters) if ns.filters else None
    result = memory.search(ns.query, limit=ns.limit, preset=ns.preset, as_of=ns.as_of, known_at=ns.known_at,
                           filters=filters, threshold=ns.threshold, **_scope(ns))
    _print_relations(result, ns.json)
    return 0


def _cmd_get_all(memory: Memory, ns: argparse.Namespace) -> int:
    _print_relations(memory.get_all(include_invalidated=ns.include_invalidated, limit=ns.limit, **_scope(ns)), ns.json)
    return 0


def _cmd_timeline(memory: Memory, ns: argparse.Namespace) -> int:
    _print_relations(memory.timeline(ns.entity, **_scope(ns)), ns.json)
    return 0


def _cmd_get(memory: Memory, ns: argparse.Namespace) -> int:
    item = memory.get(ns.memory_id)
    if item is None:
        raise NotFoundError(f"no memory with id {ns.memory_id!r}")
    if ns.json:
        print(json.dumps(item, indent=2, ensure_ascii=False))
    else:
        print(f"memory {item['id']}: {item['memory']}")
        for key in ("user_id", "agent_id", "run_id", "metadata", "created_at", "updated_at"):
            if item.get(key) is not None:
                print(f"  {key}: {json.dumps(item[key], ensure_ascii=False) if key == 'metadata' else item[key]}")
    return 0


def _cmd_update(memory: Memory, ns: argparse.Namespace) -> int:
    result = memory.update(ns.memory_id, _text(ns.text))
    print(json.dumps(result, ensure_ascii=False) if ns.json else f"updated memory {result['id']}: {result['memory']}")
    return 0


def _cmd_delete(memory: Memory, ns: argparse.Namespace) -> int:
    result = memory.delete(ns.memory_id)
    print(json.dumps(result, ensure_ascii=False) if ns.json else f"deleted memory {result['id']}")
    return 0


def _cmd_history(memory: Memory, ns: argparse.Namespace) -> int:
    events = memory.history(ns.memory_id)
    if not events:
        raise NotFoundError(f"no memory with id {ns.memory_id!r} (no history recorded for it)")
    if ns.json:
        print(json.dumps(events, indent=2, ensure_ascii=False))
        return 0
    for e in events:
        made_by = f"  (add {e['add_id']})" if e.get("add_id") else ""
        print(f"{e['created_at']}  {e['event']:<6}  {e['old_memory'] or ''!s} -> {e['new_memory'] or ''!s}{made_by}")
    return 0


def _cmd_delete_all(memory: Memory, ns: argparse.Namespace) -> int:
    scope = _scope(ns)
    if not ns.yes and not _confirm(scope):
        print("aborted", file=sys.stderr)
        return 1
    result = memory.delete_all(**scope)
    print(json.dumps(result) if ns.json else result["message"])
    return 0


_MEMORY_COMMANDS: dict[str, Callable[[Memory, argparse.Namespace], int]] = {
    "add": _cmd_add,
    "search": _cmd_search,
    "get-all": _cmd_get_all,
    "get": _cmd_get,
    "update": _cmd_update,
    "delete": _cmd_delete,
    "timeline": _cmd_timeline,
    "history": _cmd_history,
    "delete-all": _cmd_delete_all,
}


def _confirm(scope: dict[str, str | None]) -> bool:
    if not sys.stdin.isatty():
        print("graphmem: delete-all needs --yes when not run interactively", file=sys.stderr)
        return False
    named = ", ".join(f"{k}={v}" for k, v in scope.items() if v)
    return input(f"Delete every memory of {named}? [y/N] ").strip().lower() in ("y", "yes")


if __name__ == "__main__":
    raise SystemExit(main())
