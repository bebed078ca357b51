"""Fault and tenant-isolation benchmarks; what they share: running graphmem's servers from another
checkout (a before run)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def checkout_env(source: str | Path) -> dict[str, str]:
    """The environment in which ``python -m graphmem...`` run with ``cwd=source`` imports that
    checkout's graphmem (``python -m`` puts the working folder first on sys.path, before
    PYTHONPATH); checked, so a before run never measures this checkout by mistake."""
    folder = str(Path(source).resolve())
    env = {**os.environ, "PYTHONPATH": folder + os.pathsep + os.environ.get("PYTHONPATH", "")}
    check = subprocess.run([sys.executable, "-c", "import graphmem; print(graphmem.__file__)"], env=env, cwd=folder,
                           capture_output=True, text=True, check=True)
    if not check.stdout.startswith(folder):
        raise SystemExit(f"the servers would not run {folder}: {check.stdout.strip()}")
    return env
