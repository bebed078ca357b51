"""graphmem's own folder: ``$GRAPHMEM_HOME``, else ``~/.graphmem``; read when asked, so a process
that changes its environment (a test, a CLI flag) is followed. Holds the embedded store and history
by default, the launcher's build, downloaded models and caches (docs/configuration.md)."""

from __future__ import annotations

import os
from pathlib import Path


def graphmem_home() -> Path:
    return Path(os.environ.get("GRAPHMEM_HOME") or Path.home() / ".graphmem").expanduser()
