"""Where the launcher's Maven project is: a source checkout's ``neo4j-launcher/``, else the copy the
wheel carries (``graphmem/neo4j-launcher/``), unpacked under ``$GRAPHMEM_HOME/launcher`` to be built."""

from __future__ import annotations

import shutil
from pathlib import Path

from graphmem.errors import LauncherError
from graphmem.home import graphmem_home

LAUNCHER_DIR = "neo4j-launcher"
JAR_NAME = "neo4j-launcher.jar"

#: The launcher project shipped inside the wheel (pom.xml + src/), beside this package.
PACKAGED_PROJECT = Path(__file__).resolve().parent.parent / LAUNCHER_DIR


def find_root(start_points: list[Path]) -> Path:
    """A source checkout holding neo4j-launcher/pom.xml, else the packaged copy's build folder."""
    for start in start_points:
        for d in [start, *start.parents]:
            # the packaged copy inside graphmem/ is never built in place (site-packages may be read-only)
            if (d / LAUNCHER_DIR / "pom.xml").is_file() and (d / LAUNCHER_DIR).resolve() != PACKAGED_PROJECT:
                return d
    if (PACKAGED_PROJECT / "pom.xml").is_file():
        return unpack_packaged_project()
    raise LauncherError(
        f"cannot find the Neo4j launcher project ({LAUNCHER_DIR}/pom.xml) above "
        f"{', '.join(str(p) for p in start_points)} nor inside the installed package; pass root=... or --root"
    )


def unpack_packaged_project(home: Path | None = None) -> Path:
    """Copy the wheel's launcher project (pom + sources) to ``<home>/launcher/neo4j-launcher`` when
    missing or changed, and return ``<home>/launcher`` (the root to build and run from)."""
    home = home or graphmem_home()
    root = home / "launcher"
    target = root / LAUNCHER_DIR
    try:
        for source in [PACKAGED_PROJECT / "pom.xml", *(PACKAGED_PROJECT / "src").rglob("*")]:
            if not source.is_file():
                continue
            dest = target / source.relative_to(PACKAGED_PROJECT)
            if not dest.is_file() or dest.read_bytes() != source.read_bytes():
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, dest)  # a fresh mtime: needs_build() sees the change
    except OSError as exc:
        raise LauncherError(f"cannot prepare the Neo4j launcher project in {target}: {exc}") from exc
    return root
