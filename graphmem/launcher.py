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
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from graphmem.errors import LauncherError
from graphmem.home import graphmem_home

READY_MARKER = "GRAPHMEM_NEO4J_READY"
FAILED_MARKER = "GRAPHMEM_NEO4J_FAILED"
SUPPORTED_JAVA = (17, 21)  # Neo4j 5.26 runs on Java 17 or 21 only
LAUNCHER_DIR = "neo4j-launcher"
JAR_NAME = "neo4j-launcher.jar"


#: The launcher project shipped inside the wheel (pom.xml + src/), see the module docstring.
PACKAGED_PROJECT = Path(__file__).resolve().parent / LAUNCHER_DIR


def _find_root(start_points: list[Path]) -> Path:
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


def _java_version(java_home: Path) -> int | None:
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


def _check_java(java_home: Path, source: str) -> Path:
    version = _java_version(java_home)
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
        return _check_java(Path(explicit), "java_home argument")
    if os.environ.get("GRAPHMEM_JAVA_HOME"):
        return _check_java(Path(os.environ["GRAPHMEM_JAVA_HOME"]), "GRAPHMEM_JAVA_HOME")
    found: dict[int, Path] = {}
    for base in (Path("/usr/lib/jvm"), Path("/Library/Java/JavaVirtualMachines")):
        if not base.is_dir():
            continue
        for cand in sorted(base.iterdir()):
            home = cand / "Contents" / "Home" if (cand / "Contents" / "Home").is_dir() else cand
            home = home.resolve()  # java-1.17.0-openjdk-amd64 -> java-17-openjdk-amd64
            if not (home / "bin" / "java").exists():
                continue
            v = _java_version(home)
            if v in SUPPORTED_JAVA and v not in found:
                found[v] = home
    for v in SUPPORTED_JAVA:  # prefer 17
        if v in found:
            return found[v]
    env_home = os.environ.get("JAVA_HOME")
    if env_home and _java_version(Path(env_home)) in SUPPORTED_JAVA:
        return Path(env_home)
    java = shutil.which("java")
    if java:
        return _check_java(Path(os.path.realpath(java)).parent.parent, "java on PATH")
    raise LauncherError("no Java found: install a JDK 17 or 21, or set GRAPHMEM_JAVA_HOME")


@contextlib.contextmanager
def _os_errors(action: str) -> Iterator[None]:
    """Files, processes and sockets fail with OSError; callers see a LauncherError naming the step."""
    try:
        yield
    except OSError as exc:
        raise LauncherError(f"cannot {action} Neo4j: {exc}") from exc


@contextlib.contextmanager
def _file_lock(path: Path, timeout: float) -> Iterator[None]:
    """Exclusive inter-process lock (flock), so concurrent starts/builds (parallel test runs,
    pytest-xdist workers) do not race: the second caller waits, then finds Neo4j running."""
    try:
        import fcntl
    except ImportError:  # Windows: no locking
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fh:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise LauncherError(f"timed out after {timeout}s waiting for lock {path}") from None
                time.sleep(0.2)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\[[0-9;]*m")


def log_tail(path: Path, lines: int = 30) -> list[str]:
    """The last ``lines`` lines of a log, without terminal colour codes (Maven leaves some even when told not to)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    return [_ANSI.sub("", line).rstrip() for line in text.splitlines()[-lines:]]


def _port_open(port: int, host: str = "127.0.0.1", timeout: float = 0.5) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def _pid_alive(pid: int) -> bool:
    try:
        # Reap it if it is our own exited child, so it does not linger as a zombie.
        if os.name != "nt" and os.waitpid(pid, os.WNOHANG)[0] == pid:
            return False
    except ChildProcessError:
        pass
    except OSError:
        pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    status = Path(f"/proc/{pid}/status")
    if status.exists():
        try:
            if re.search(r"^State:\s+Z", status.read_text(), re.MULTILINE):
                return False
        except OSError:
            pass
    return True


def _is_our_java(pid: int) -> bool:
    """Guard against pid reuse: on Linux check the command line names our jar."""
    cmdline = Path(f"/proc/{pid}/cmdline")
    if not cmdline.exists():
        return True  # no /proc (macOS): trust the pid file
    try:
        return JAR_NAME.encode() in cmdline.read_bytes()
    except OSError:
        return False


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
        self.root = Path(root).resolve() if root else _find_root([Path(__file__).resolve().parent, Path.cwd()])
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
        with _os_errors("build"), _file_lock(self.state_dir / "build.lock", timeout=1800):
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
        if pid is not None and _pid_alive(pid) and _is_our_java(pid):
            return pid
        return None

    def is_running(self) -> bool:
        return self._live_pid() is not None and _port_open(self.bolt_port)

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
        with _os_errors("start"), _file_lock(self.lock_file, timeout=timeout + 1800):  # + room for a cold build
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
            while time.monotonic() < deadline and _pid_alive(stale):
                if _port_open(self.bolt_port):
                    return False
                time.sleep(0.25)
            raise LauncherError(f"Neo4j (pid {stale}) is running but not ready after {timeout}s; "
                               f"log {self.log_file}:\n{self._log_tail()}")
        self.pid_file.unlink(missing_ok=True)
        for port in (self.bolt_port, self.http_port):
            if _port_open(port):
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
            elif _port_open(self.bolt_port):
                return True
            if not _pid_alive(pid):
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
        while _pid_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if _pid_alive(pid):
            try:
                os.kill(pid, signal.SIGKILL if os.name != "nt" else signal.SIGTERM)
            except OSError:
                pass
            for _ in range(50):
                if not _pid_alive(pid):
                    break
                time.sleep(0.1)
        if self._proc is not None and self._proc.pid == pid:
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
            self._proc = None

    def stop(self) -> None:
        with _os_errors("stop"), _file_lock(self.lock_file, timeout=600):
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


if __name__ == "__main__":
    raise SystemExit(main())
