"""The JDK Neo4j 5.26 runs on: found (explicit, GRAPHMEM_JAVA_HOME, the usual folders, JAVA_HOME,
PATH) and checked to be 17 or 21."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

from graphmem.errors import LauncherError

SUPPORTED_JAVA = (17, 21)  # Neo4j 5.26 runs on Java 17 or 21 only


def java_version(java_home: Path) -> int | None:
    """Major version of the JDK at java_home (from its `release` file, else `java -version`)."""
    release = java_home / "release"
    text = ""
    try:
        text = release.read_text(errors="replace")
    except OSError:
        exe = java_home / "bin" / ("java.exe" if os.name == "nt" else "java")
        if not exe.exists():
            return None
        try:
            text = subprocess.run([str(exe), "-version"], capture_output=True, text=True, timeout=30).stderr
        except (OSError, subprocess.SubprocessError):
            return None
    m = re.search(r'version\s*=?\s*"(\d+)(?:\.(\d+))?', text, re.IGNORECASE)
    if not m:
        return None
    major = int(m.group(1))
    return int(m.group(2)) if major == 1 and m.group(2) else major  # "1.8.0" style


def check_java(java_home: Path, source: str) -> Path:
    version = java_version(java_home)
    if version not in SUPPORTED_JAVA:
        raise LauncherError(
            f"Java at {java_home} ({source}) is version {version or 'unknown'}; Neo4j 5.26 needs "
            f"Java 17 or 21 (Java 25 is not supported). Install a JDK 17 (e.g. apt-get install "
            f"openjdk-17-jdk-headless) or point GRAPHMEM_JAVA_HOME at one."
        )
    return java_home


def find_java_home(explicit: str | None = None) -> Path:
    """explicit > $GRAPHMEM_JAVA_HOME > JDK 17/21 under /usr/lib/jvm (17 first) > $JAVA_HOME > PATH."""
    if explicit:
        return check_java(Path(explicit), "java_home argument")
    if os.environ.get("GRAPHMEM_JAVA_HOME"):
        return check_java(Path(os.environ["GRAPHMEM_JAVA_HOME"]), "GRAPHMEM_JAVA_HOME")
    found: dict[int, Path] = {}
    for base in (Path("/usr/lib/jvm"), Path("/Library/Java/JavaVirtualMachines")):
        if not base.is_dir():
            continue
        for cand in sorted(base.iterdir()):
            home = cand / "Contents" / "Home" if (cand / "Contents" / "Home").is_dir() else cand
            home = home.resolve()  # java-1.17.0-openjdk-amd64 -> java-17-openjdk-amd64
            if not (home / "bin" / "java").exists():
                continue
            v = java_version(home)
            if v in SUPPORTED_JAVA and v not in found:
                found[v] = home
    for v in SUPPORTED_JAVA:  # prefer 17
        if v in found:
            return found[v]
    env_home = os.environ.get("JAVA_HOME")
    if env_home and java_version(Path(env_home)) in SUPPORTED_JAVA:
        return Path(env_home)
    java = shutil.which("java")
    if java:
        return check_java(Path(os.path.realpath(java)).parent.parent, "java on PATH")
    raise LauncherError("no Java found: install a JDK 17 or 21, or set GRAPHMEM_JAVA_HOME")
