"""One local Neo4j process: built with Maven when needed, started detached, waited for, warmed,
stopped (SIGTERM, then SIGKILL)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from graphmem.errors import LauncherError
from graphmem.launcher.java import find_java_home
from graphmem.launcher.project import JAR_NAME, LAUNCHER_DIR, find_root
from graphmem.launcher.system import file_lock, is_our_java, log_tail, os_errors, pid_alive, port_open

READY_MARKER = "GRAPHMEM_NEO4J_READY"
FAILED_MARKER = "GRAPHMEM_NEO4J_FAILED"


class Neo4jLauncher:
    """Manage one local Neo4j 5.26 Community process started from neo4j-launcher/."""

    def __init__(
        self,
        root: Path | None = None,
        bolt_port: int = 7687,
        http_port: int = 7474,
        data_dir: Path | None = None,
        java_home: str | None = None,
        heap: str | None = None,
        pagecache: str | None = None,
    ) -> None:
        self.root = Path(root).resolve() if root else find_root([Path(__file__).resolve().parent, Path.cwd()])
        self.bolt_port = int(bolt_port)
        self.http_port = int(http_port)
        self.state_dir = self.root / ".neo4j"
        suffix = "" if self.bolt_port == 7687 else f"-{self.bolt_port}"
        self.pid_file = self.state_dir / f"neo4j{suffix}.pid"
        self.log_file = self.state_dir / f"neo4j{suffix}.log"
        self.lock_file = self.state_dir / f"neo4j{suffix}.lock"
        self.data_dir = Path(data_dir).resolve() if data_dir else self.state_dir / f"data{suffix}"
        self.project_dir = self.root / LAUNCHER_DIR
        self.jar = self.project_dir / "target" / JAR_NAME
        self._java_home_arg = java_home
        self._java_home: Path | None = None
        self.heap = heap or os.environ.get("GRAPHMEM_NEO4J_HEAP", "2g")
        self.pagecache = pagecache or os.environ.get("GRAPHMEM_NEO4J_PAGECACHE", "512m")
        self._proc: subprocess.Popen[bytes] | None = None
        self.warmed: str | None = None  # what the last start's warming did (start(warm=True))

    # -- addresses -------------------------------------------------------------------------
    @property
    def uri(self) -> str:
        return f"bolt://127.0.0.1:{self.bolt_port}"

    @property
    def http_url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def browser_url(self) -> str:
        return f"{self.http_url}/browser/"

    @property
    def java_home(self) -> Path:
        if self._java_home is None:
            self._java_home = find_java_home(self._java_home_arg)
        return self._java_home

    # -- build -----------------------------------------------------------------------------
    def needs_build(self) -> bool:
        lib = self.jar.parent / "lib"
        if not self.jar.is_file() or not lib.is_dir() or not any(lib.glob("*.jar")):
            return True
        built = self.jar.stat().st_mtime
        sources = [self.project_dir / "pom.xml", *(self.project_dir / "src").rglob("*")]
        return any(p.is_file() and p.stat().st_mtime > built for p in sources)

    def build(self) -> None:
        """Run Maven if the jar is missing or older than the pom/sources; streams its output."""
        if not self.needs_build():
            return
        with os_errors("build"), file_lock(self.state_dir / "build.lock", timeout=1800):
            if self.needs_build():  # another process may have built it while we waited
                self._build()

    def _build(self) -> None:
        mvn = os.environ.get("GRAPHMEM_MVN") or shutil.which("mvn")
        if not mvn:
            raise LauncherError("Maven (mvn) not found on PATH; install it (apt-get install maven) or set GRAPHMEM_MVN")
        env = dict(os.environ, JAVA_HOME=str(self.java_home))
        cmd = [mvn, "-B", "--no-transfer-progress", "-Dstyle.color=never",
               "-f", str(self.project_dir / "pom.xml"), "package", "-DskipTests"]
        self.state_dir.mkdir(parents=True, exist_ok=True)
        build_log = self.state_dir / "build.log"
        print(f"[graphmem.launcher] building the Neo4j launcher with Maven (once; a minute or two, Maven Central "
              f"downloads on the first run); log: {build_log}", file=sys.stderr, flush=True)
        started = time.monotonic()
        with open(build_log, "w", encoding="utf-8", errors="replace") as log:
            log.write(f"{' '.join(cmd)} (JAVA_HOME={self.java_home})\n")
            log.flush()
            code = subprocess.run(cmd, cwd=self.root, env=env, stdout=log, stderr=subprocess.STDOUT).returncode
        if code != 0:
            raise LauncherError(f"neo4j-launcher build failed (Maven exit {code}); the end of {build_log}:\n" + "\n".join(log_tail(build_log)))
        print(f"[graphmem.launcher] built in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True)
        self.jar.touch()  # make the up-to-date check hold even if Maven skipped repackaging

    # -- lifecycle -------------------------------------------------------------------------
    def _read_pid(self) -> int | None:
        try:
            return int(self.pid_file.read_text().strip())
        except (OSError, ValueError):
            return None

    def _live_pid(self) -> int | None:
        pid = self._read_pid()
        if pid is not None and pid_alive(pid) and is_our_java(pid):
            return pid
        return None

    def is_running(self) -> bool:
        return self._live_pid() is not None and port_open(self.bolt_port)

    def _log_tail(self, n: int = 40) -> str:
        try:
            return "\n".join(self.log_file.read_text(errors="replace").splitlines()[-n:])
        except OSError:
            return "(no log)"

    def start(self, timeout: float = 180, warm: bool = True) -> str:
        """Start Neo4j in the background (it outlives this Python process); return the bolt URI.

        ``warm`` (the CLI's start without ``--no-warm``): when this call started the server and its
        database holds graphmem's schema (a restart of a database in use), plan graphmem's
        statements before returning (``warm_statements``: seconds to tens of seconds), so the first
        add after the restart does not pay for it (14-22 s measured); what was done is printed on
        stderr and kept in ``warmed``. A server already running is returned as it is."""
        if self.is_running():
            return self.uri
        with os_errors("start"), file_lock(self.lock_file, timeout=timeout + 1800):  # + room for a cold build
            started = self._start(timeout)
        if started and warm:
            self.warmed = warm_statements(self.uri)
            print(f"[graphmem.launcher] {self.warmed}", file=sys.stderr, flush=True)
        return self.uri

    def _start(self, timeout: float) -> bool:
        """True when this call started the server (False: it was up, or came up, on its own)."""
        if self.is_running():
            return False
        stale = self._live_pid()
        if stale is not None:  # our process, but Bolt is not up: started outside the lock, or wedged
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline and pid_alive(stale):
                if port_open(self.bolt_port):
                    return False
                time.sleep(0.25)
            raise LauncherError(f"Neo4j (pid {stale}) is running but not ready after {timeout}s; "
                               f"log {self.log_file}:\n{self._log_tail()}")
        self.pid_file.unlink(missing_ok=True)
        for port in (self.bolt_port, self.http_port):
            if port_open(port):
                raise LauncherError(f"port {port} on 127.0.0.1 is already in use by another process "
                                   f"(another Neo4j?); stop it or choose other ports")
        self.build()
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        java = self.java_home / "bin" / ("java.exe" if os.name == "nt" else "java")
        cmd = [
            str(java), f"-Xmx{self.heap}",
            "-XX:+UseG1GC", "-XX:-OmitStackTraceInFastThrow", "-XX:+DisableExplicitGC",
            "-Dio.netty.tryReflectionSetAccessible=true", "-Djdk.nio.maxCachedBufferSize=1024",
            "-Dlog4j2.disable.jmx=true",
            "-jar", str(self.jar),  # manifest adds Class-Path lib/*.jar and the --add-opens Neo4j needs
            "--home", str(self.data_dir),
            "--bolt-port", str(self.bolt_port), "--http-port", str(self.http_port),
            "--pagecache", self.pagecache,
        ]
        if os.environ.get("GRAPHMEM_NEO4J_SKIP_SELFCHECK") == "1":
            cmd.append("--skip-selfcheck")  # saves ~3 s of start-up
        detach: dict[str, Any] = {"start_new_session": True} if os.name != "nt" else {
            "creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0) | getattr(subprocess, "DETACHED_PROCESS", 0)}
        with open(self.log_file, "w") as log:
            log.write(f"# {' '.join(cmd)}\n")
            log.flush()
            self._proc = subprocess.Popen(cmd, cwd=self.state_dir, stdin=subprocess.DEVNULL,
                                          stdout=log, stderr=subprocess.STDOUT, close_fds=True, **detach)
        self.pid_file.write_text(f"{self._proc.pid}\n")
        if self._wait_ready(self._proc.pid, timeout):
            return True
        self._kill(self._proc.pid)
        self.pid_file.unlink(missing_ok=True)
        raise LauncherError(f"Neo4j did not become ready (see {self.log_file}); last log lines:\n{self._log_tail()}")

    def _wait_ready(self, pid: int, timeout: float) -> bool:
        """Wait for the READY line (the log is truncated at each start). Bolt binds before the
        database is online and self-checked, so a Bolt TCP connect only counts if the log is
        unreadable."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                text = self.log_file.read_text(errors="replace")
            except OSError:
                text = None
            if text is not None:
                if READY_MARKER in text:
                    return True
                if FAILED_MARKER in text:
                    return False
            elif port_open(self.bolt_port):
                return True
            if not pid_alive(pid):
                return False
            time.sleep(0.25)
        return False

    def _kill(self, pid: int, grace: float = 60) -> None:
        """SIGTERM (runs the JVM shutdown hook: clean checkpoint), then SIGKILL after `grace` s."""
        try:
            os.kill(pid, signal.SIGTERM)
        except OSError:
            pass
        deadline = time.monotonic() + grace
        while pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if pid_alive(pid):
            try:
                os.kill(pid, signal.SIGKILL if os.name != "nt" else signal.SIGTERM)
            except OSError:
                pass
            for _ in range(50):
                if not pid_alive(pid):
                    break
                time.sleep(0.1)
        if self._proc is not None and self._proc.pid == pid:
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            self._proc = None

    def stop(self) -> None:
        with os_errors("stop"), file_lock(self.lock_file, timeout=600):
            pid = self._live_pid()
            if pid is not None:
                self._kill(pid)
            self.pid_file.unlink(missing_ok=True)


def warm_statements(uri: str) -> str:
    """Plan graphmem's statements on the server just started (stores/neo4j/prewarm.py, in a process
    of its own: the launcher stays below the stores); one line saying what was done."""
    done = subprocess.run([sys.executable, "-m", "graphmem.stores.neo4j.prewarm", uri],
                          capture_output=True, text=True, check=False)
    lines = (done.stdout or done.stderr).strip().splitlines()
    return lines[-1] if lines else f"warming graphmem's statements exited with status {done.returncode}"
