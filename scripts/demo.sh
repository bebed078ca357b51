#!/usr/bin/env bash
# Set up a virtualenv with graphmem and run the demo (embedded store; scripted LLM unless one is configured).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip >/dev/null
.venv/bin/python -m pip install -q -e .
exec .venv/bin/graphmem demo "$@"
