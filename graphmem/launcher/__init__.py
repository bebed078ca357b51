"""Build, start, stop and query a local Neo4j 5.26 Community DBMS without Docker.

The Java side lives in ``neo4j-launcher/`` (a thin jar plus ``target/lib/*.jar``) and runs
Neo4j in-process with Bolt on 127.0.0.1:7687, HTTP + Browser on 127.0.0.1:7474 and auth
disabled. This module only uses the standard library. Its failures are
:class:`~graphmem.errors.LauncherError`.

Where it builds: in a source checkout, the checkout's ``neo4j-launcher/``. An installed wheel
carries the pom and the Java sources as package data (``graphmem/neo4j-launcher/``); they are
copied to ``$GRAPHMEM_HOME/launcher/neo4j-launcher/`` (default ``~/.graphmem``) and built there
with Maven on first use, so a pip-installed graphmem can start Neo4j too (Java 17/21 + Maven).

    python -m graphmem.launcher start            # builds on first use, prints the bolt URI
    python -m graphmem.launcher status
    python -m graphmem.launcher stop

State lives under ``<root>/.neo4j/``: ``neo4j.pid``, ``neo4j.log`` and the default Neo4j home
``data/`` (a non-default bolt port gets its own ``-<port>`` suffixed files).

Environment: GRAPHMEM_JAVA_HOME (a JDK 17/21), GRAPHMEM_MVN (Maven executable),
GRAPHMEM_NEO4J_HEAP (default 2g), GRAPHMEM_NEO4J_PAGECACHE (default 512m),
GRAPHMEM_NEO4J_SKIP_SELFCHECK=1 (skip the vector/fulltext/dynamic-type check at start-up).

Owns the launcher: the Maven project's place (project.py), the JDK (java.py), the operating system
under it (system.py), one Neo4j process (process.py) and its command line (cli.py). May import
errors and home only (the foundation): it stays below the stores, which start it in tests and
``graphmem browse``; warming graphmem's statements runs the stores' prewarm in a process of its own.
"""

from graphmem.launcher.cli import build_parser, main
from graphmem.launcher.java import SUPPORTED_JAVA, find_java_home
from graphmem.launcher.process import FAILED_MARKER, READY_MARKER, Neo4jLauncher, warm_statements
from graphmem.launcher.project import JAR_NAME, LAUNCHER_DIR, PACKAGED_PROJECT, unpack_packaged_project
from graphmem.launcher.system import log_tail

__all__ = [
    "FAILED_MARKER", "JAR_NAME", "LAUNCHER_DIR", "PACKAGED_PROJECT", "READY_MARKER", "SUPPORTED_JAVA", "Neo4jLauncher",
    "build_parser", "find_java_home", "log_tail", "main", "unpack_packaged_project", "warm_statements",
]
