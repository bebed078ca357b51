"""``python -m graphmem.launcher build|start|stop|status``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from graphmem.errors import LauncherError
from graphmem.launcher.process import Neo4jLauncher


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m graphmem.launcher",
                                description="Local Neo4j 5.26 Community (Bolt + HTTP + Browser) without Docker: Java 17/21 "
                                "and Maven; the first start builds the launcher (its Maven log goes to .neo4j/build.log).")
    p.add_argument("command", choices=["build", "start", "stop", "status"], metavar="COMMAND",
                   help="build: compile the launcher (start does it when needed); start: start Neo4j in the background "
                        "and print its bolt URL; stop: stop it; status: say whether it runs (exit 1 when not)")
    p.add_argument("--bolt-port", type=int, default=7687, help="Bolt port (default 7687); each bolt port is its own server and data")
    p.add_argument("--http-port", type=int, default=7474, help="HTTP port of Neo4j Browser (default 7474)")
    p.add_argument("--data-dir", type=Path, default=None, help="Neo4j home (data/ and logs/ go inside; default .neo4j/data[-PORT])")
    p.add_argument("--root", type=Path, default=None, help="repo root containing neo4j-launcher/ (default: found from here)")
    p.add_argument("--java-home", default=None, help="JDK 17 or 21 (default: auto-detect)")
    p.add_argument("--timeout", type=float, default=180, help="seconds start waits for Bolt to answer (default 180)")
    p.add_argument("--no-warm", dest="warm", action="store_false",
                   help="start: do not plan graphmem's statements after starting a database that holds graphmem's "
                        "schema (by default the next short-lived process finds them planned)")
    return p


def main(argv: list[str] | None = None) -> int:
    a = build_parser().parse_args(argv)
    try:
        launcher = Neo4jLauncher(root=a.root, bolt_port=a.bolt_port, http_port=a.http_port,
                                 data_dir=a.data_dir, java_home=a.java_home)
        if a.command == "build":
            launcher.build()
            print(f"built {launcher.jar}")
        elif a.command == "start":
            print(launcher.start(timeout=a.timeout, warm=a.warm), flush=True)
            print(f"browser: {launcher.browser_url}", file=sys.stderr, flush=True)
        elif a.command == "stop":
            launcher.stop()
            print("stopped")
        else:
            running = launcher.is_running()
            print(f"running {launcher.uri} {launcher.browser_url} pid={launcher._read_pid()}" if running
                  else "not running")
            return 0 if running else 1
    except LauncherError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    return 0
