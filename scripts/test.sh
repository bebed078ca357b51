#!/usr/bin/env bash
# Every test, Neo4j's included: virtualenv + install, build and start the project's Neo4j 5.26
# launcher (Java 17 + Maven; no Docker needed), run pytest, stop Neo4j.
# Set GRAPHMEM_NEO4J_URI to test against a Neo4j you run yourself instead (it must be empty: tests write to it).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e '.[dev]'

started=0
if [ -z "${GRAPHMEM_NEO4J_URI:-}" ]; then
  .venv/bin/python -m graphmem.launcher start
  started=1
  export GRAPHMEM_NEO4J_URI=bolt://127.0.0.1:7687
fi
stop() { [ "$started" = 1 ] && .venv/bin/python -m graphmem.launcher stop || true; }
trap stop EXIT

# GRAPHMEM_REQUIRE_NEO4J makes the run fail if no Neo4j test passed (tests/conftest.py).
GRAPHMEM_REQUIRE_NEO4J=1 .venv/bin/python -m pytest "$@"
