"""The ``graphmem serve`` and ``graphmem mcp`` subcommands (registered from cli.py)."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphmem.errors import ConfigError
from graphmem.schema.counts import counted

if TYPE_CHECKING:
    from graphmem.server.access import Tenants


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("serve", help="run the REST server (mem0's routes, tenant API keys)",
                       description="Serve mem0's REST routes (plus /timeline and /graph) over HTTP with uvicorn; "
                       "OpenAPI docs at /docs. Needs graphmem[server]. Callers authenticate with keys from --keys.")
    p.add_argument("--keys", type=Path, help="JSON file of API keys (sha256) and the scopes each may use")
    p.add_argument("--no-auth", action="store_true", help="serve without keys (every caller is admin; local use only)")
    p.add_argument("--host", default="127.0.0.1", help="interface to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--max-body-bytes", type=int, default=1_000_000, help="largest request body accepted (default 1 MB)")
    p.add_argument("--workers", type=int, default=16, help="engine threads serving requests (default 16)")
    p.add_argument("--config", type=Path, help="JSON config file (default: $GRAPHMEM_CONFIG, ./graphmem.json, $GRAPHMEM_HOME/config.json)")

    p = sub.add_parser("mcp", help="run the MCP server (stdio, or --http)",
                       description="Serve graphmem's memory tools to MCP clients (Claude Desktop, Cursor, coding "
                       "agents) over stdio, or streamable HTTP with --http. Needs graphmem[mcp]. Give the scope with "
                       "--user/--agent/--run (the server then serves that scope only), or --scope-per-call.")
    g = p.add_argument_group("scope")
    g.add_argument("--user", dest="serve_user_id", help="user id this server serves")
    g.add_argument("--agent", dest="serve_agent_id", help="agent id this server serves")
    g.add_argument("--run", dest="serve_run_id", help="run id this server serves")
    g.add_argument("--scope-per-call", action="store_true", help="no fixed scope: every tool call names its own")
    p.add_argument("--http", action="store_true", help="streamable HTTP instead of stdio")
    p.add_argument("--keys", type=Path, help="with --http: JSON file of API keys, the same as graphmem serve --keys "
                   "(each call's key must be bound to the user it uses)")
    p.add_argument("--no-auth", action="store_true", help="with --http: serve without keys (needed for --scope-per-call "
                   "without --keys; local use only)")
    p.add_argument("--host", default="127.0.0.1", help="HTTP interface (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765)")
    p.add_argument("--config", type=Path, help="JSON config file (default: $GRAPHMEM_CONFIG, ./graphmem.json, $GRAPHMEM_HOME/config.json)")


def run(ns: argparse.Namespace, config: dict[str, Any] | None) -> int:
    return _serve(ns, config) if ns.command == "serve" else _mcp(ns, config)


def _serve(ns: argparse.Namespace, config: dict[str, Any] | None) -> int:
    from graphmem.server.access import Tenants

    if ns.keys is None and not ns.no_auth:
        raise ConfigError("graphmem serve needs --keys FILE (or --no-auth for local use)")
    tenants = None if ns.no_auth else Tenants.load(ns.keys)
    try:
        import uvicorn

        from graphmem.aio import AsyncMemory
        from graphmem.server.rest import create_app
    except ImportError as exc:
        raise ConfigError(f"graphmem serve needs the server extra: pip install 'graphmem[server]' ({exc})") from exc
    memory = AsyncMemory(config, max_workers=ns.workers)
    try:
        app = create_app(memory, tenants, max_body=ns.max_body_bytes)
        _access_log()
        where = urls(ns.host, ns.port)
        keys = "without keys (--no-auth: every caller is admin)" if tenants is None else f"{counted(len(tenants.by_digest), 'key')} from {ns.keys}"
        print(f"graphmem serve: REST API at {where['base']} ({keys})\n"
              f"  inspector: {where['ui']}\n  docs:   {where['docs']}\n  health: {where['health']}\n  stop with Ctrl-C",
              file=sys.stderr, flush=True)
        _stop_on_sigterm()
        uvicorn.run(app, host=ns.host, port=ns.port, log_level="warning", access_log=False)
    finally:
        memory.sync.close()
    return 0


def _stop_on_sigterm() -> None:
    """After its graceful shutdown uvicorn raises the stop signal again under the handler found
    before it; SIGTERM's default action would end the process there, before the store and the
    history are closed (an embedded store left uncompacted, history rows left for the next start's
    repair). As a SystemExit the ``finally`` closes them."""
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _exit_cleanly)


def _exit_cleanly(signum: int, frame: object) -> None:
    raise SystemExit(0)


def _access_log() -> None:
    """graphmem's access log (one line per request, key names only) on stderr at INFO; uvicorn's own stays off."""
    import logging

    from graphmem.errors.redact import guard_logger

    log = logging.getLogger("graphmem.server.access")
    if not log.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(asctime)s %(message)s"))
        guard_logger(handler)  # a failed request's line carries its error's text: no credentials in it
        log.addHandler(handler)
    log.setLevel(logging.INFO)
    log.propagate = False


def urls(host: str, port: int) -> dict[str, str]:
    """The addresses a starting server prints (0.0.0.0 shown as 127.0.0.1, which reaches it too)."""
    shown = "127.0.0.1" if host in ("0.0.0.0", "::", "") else host
    base = f"http://{shown}:{port}"
    return {"base": base, "ui": f"{base}/ui", "docs": f"{base}/docs", "health": f"{base}/health", "mcp": f"{base}/mcp"}


def _mcp_keys(ns: argparse.Namespace) -> Tenants | None:
    """The MCP server's keys: over HTTP, --keys (the REST server's file) or an explicit --no-auth for
    per-call scopes; a server without keys on an interface other than loopback is warned about."""
    from graphmem.server.access import Tenants
    from graphmem.server.mcp_http import is_loopback

    if not ns.http:
        if ns.keys is not None or ns.no_auth:
            raise ConfigError("graphmem mcp: --keys and --no-auth apply to --http (stdio serves the process that started it)")
        return None
    if ns.keys is not None and ns.no_auth:
        raise ConfigError("graphmem mcp: give --keys or --no-auth, not both")
    if ns.scope_per_call and ns.keys is None and not ns.no_auth:
        raise ConfigError("graphmem mcp --http --scope-per-call lets a caller name any user: give --keys FILE "
                          "(the keys of graphmem serve), or --no-auth for local use")
    if ns.keys is None and not is_loopback(ns.host):
        print(f"graphmem mcp: WARNING: serving on {ns.host} without keys: anyone who reaches this port can read and "
              "write the memory it serves; use --keys FILE", file=sys.stderr, flush=True)
    return Tenants.load(ns.keys) if ns.keys is not None else None


def _mcp(ns: argparse.Namespace, config: dict[str, Any] | None) -> int:
    # own dest names: the CLI's generic scope check (user_id etc.) must not apply to --scope-per-call
    scope = {"user_id": ns.serve_user_id, "agent_id": ns.serve_agent_id, "run_id": ns.serve_run_id}
    fixed = any(scope.values())
    if fixed == ns.scope_per_call:
        raise ConfigError("graphmem mcp needs a scope (--user/--agent/--run) or --scope-per-call, not both")
    tenants = _mcp_keys(ns)
    try:
        from graphmem.server.mcp import serve
    except ImportError as exc:
        raise ConfigError(f"graphmem mcp needs the mcp extra: pip install 'graphmem[mcp]' ({exc})") from exc
    _access_log()  # on stderr: stdio's protocol is on stdout
    if ns.http:
        served = ", ".join(f"{k}={v}" for k, v in scope.items() if v) or "the scope each call names"
        where = urls(ns.host, ns.port)
        keys = f"{counted(len(tenants.by_digest), 'key')} from {ns.keys}" if tenants is not None else "without keys"
        print(f"graphmem mcp: MCP (streamable HTTP) at {where['mcp']} for {served} ({keys})\n  health: {where['health']}\n"
              "  stop with Ctrl-C", file=sys.stderr, flush=True)
    serve(config, scope if fixed else None, http=ns.http, host=ns.host, port=ns.port, tenants=tenants)
    print("graphmem mcp: stopped", file=sys.stderr)
    return 0
