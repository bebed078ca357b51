"""``graphmem purge`` and ``graphmem forget`` (retention and erasure; graphmem.lifecycle.retention)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

COMMANDS = ("purge", "forget")


def add_parsers(sub: Any) -> None:
    p = sub.add_parser("purge", help="remove expired memories and messages now", description="Remove every memory fact and logged message whose expiration date or TTL has passed (they are already invisible to reads), with their history rows.")
    p.add_argument("--config", type=Path, help="JSON config file (default: $GRAPHMEM_CONFIG, ./graphmem.json, $GRAPHMEM_HOME/config.json)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")

    p = sub.add_parser("forget", help="erase a scope, or one entity of it", description="Erase everything of the scope (a user's runs too), or with --entity one entity with its relations and the memories, messages and history rows that mention it. The history keeps only that an erasure happened.")
    p.add_argument("--entity", help="erase only this entity (by name)")
    p.add_argument("--yes", action="store_true", help="do not ask for confirmation")
    g = p.add_argument_group("scope (at least one)")
    g.add_argument("--user", dest="user_id", help="user id")
    g.add_argument("--agent", dest="agent_id", help="agent id")
    g.add_argument("--run", dest="run_id", help="run id")
    p.add_argument("--config", type=Path, help="JSON config file (default: $GRAPHMEM_CONFIG, ./graphmem.json, $GRAPHMEM_HOME/config.json)")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")


def run(ns: argparse.Namespace, config: dict[str, Any] | None) -> int:
    from graphmem.memory import Memory

    with Memory(config) as memory:
        if ns.command == "purge":
            result = memory.purge_expired()
        else:
            scope = {"user_id": ns.user_id, "agent_id": ns.agent_id, "run_id": ns.run_id}
            if not ns.yes and not _confirm(scope, ns.entity):
                print("aborted", file=sys.stderr)
                return 1
            result = memory.forget_entity(ns.entity, **scope) if ns.entity else memory.forget(**scope)
    print(json.dumps(result) if ns.json else ", ".join(f"{k}: {v}" for k, v in result.items()))
    return 0


def _confirm(scope: dict[str, str | None], entity: str | None) -> bool:
    if not sys.stdin.isatty():
        print("graphmem: forget needs --yes when not run interactively", file=sys.stderr)
        return False
    named = ", ".join(f"{k}={v}" for k, v in scope.items() if v)
    what = f"the entity {entity!r} of {named}" if entity else f"everything of {named}"
    return input(f"Erase {what} for good? [y/N] ").strip().lower() in ("y", "yes")
