"""Shared fixtures. The Neo4j tests run against a real Neo4j 5.26 (the project's launcher, or the
server named by GRAPHMEM_NEO4J_URI). They fail when Neo4j is unreachable; set GRAPHMEM_ALLOW_SKIP=1
to skip them instead on a machine without Java."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from graphmem.types import Scope

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
MODEL_DIR = Path(os.environ.get("GRAPHMEM_TEST_MODEL_DIR", SHARED / "models" / "all-MiniLM-L6-v2-onnx"))
#: One embedding size for the whole session: a Neo4j vector index has one dimension, and the
#: semantic tests use MiniLM (384), so the hashing embedder of the other tests uses 384 too.
TEST_DIMS = int(os.environ.get("GRAPHMEM_TEST_DIMS", "384"))
ALLOW_SKIP = os.environ.get("GRAPHMEM_ALLOW_SKIP") == "1"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "neo4j: needs a real Neo4j server")


@pytest.fixture(scope="session")
def neo4j_uri() -> str:
    """A reachable Neo4j: GRAPHMEM_NEO4J_URI, or the project's launcher started on demand."""
    uri = os.environ.get("GRAPHMEM_NEO4J_URI")
    if not uri:
        from graphmem.launcher import Neo4jLauncher

        try:
            uri = Neo4jLauncher(root=ROOT).start()
        except Exception as exc:  # noqa: BLE001 - reported as the reason below
            if ALLOW_SKIP:
                pytest.skip(f"Neo4j launcher could not start: {exc}")
            raise
    from neo4j import GraphDatabase

    try:
        with GraphDatabase.driver(uri, auth=None) as driver:
            driver.verify_connectivity()
    except Exception as exc:  # noqa: BLE001
        if ALLOW_SKIP:
            pytest.skip(f"Neo4j unreachable at {uri}: {exc}")
        raise
    return uri


@pytest.fixture(scope="module")
def raw_driver(neo4j_uri):
    """A plain Neo4j driver on the test server, for checks below graphmem's API."""
    from neo4j import GraphDatabase

    with GraphDatabase.driver(neo4j_uri, auth=None) as driver:
        yield driver


@pytest.fixture
def server():
    """The scripted OpenAI-compatible LLM server (the only LLM test double)."""
    from graphmem.testing import ScriptedLLMServer

    with ScriptedLLMServer() as s:
        yield s


@pytest.fixture
def uid() -> str:
    """A fresh user id, so tests sharing a Neo4j never see each other's data."""
    return f"u-{uuid.uuid4().hex[:8]}"


@pytest.fixture
def scope() -> Scope:
    return Scope.of(user_id=f"user-{uuid.uuid4().hex[:8]}")


def make_store(kind: str, request: pytest.FixtureRequest, tmp_path: Path):
    if kind == "embedded":
        from graphmem.stores.embedded import EmbeddedStore

        store = EmbeddedStore(path=tmp_path / "graph", embedding_dims=TEST_DIMS)
    else:
        from graphmem.stores.neo4j import Neo4jStore

        uri = request.getfixturevalue("neo4j_uri")
        store = Neo4jStore(url=uri, embedding_dims=TEST_DIMS)
    store.setup()
    return store


@pytest.fixture
def spans():
    """The process's in-memory span exporter (tests/tracing_helpers.py), emptied before and after."""
    from tracing_helpers import exporter

    found = exporter()
    found.clear()
    yield found
    found.clear()


@pytest.fixture(params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def store(request: pytest.FixtureRequest, tmp_path: Path):
    """Every store implementation, for the shared contract suite."""
    s = make_store(request.param, request, tmp_path)
    yield s
    s.close()


# --- fail the run when Neo4j tests were required but none passed --------------------------------

_neo4j_passed: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if report.when == "call" and report.passed and "neo4j" in report.keywords:
        _neo4j_passed.append(report.nodeid)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get("GRAPHMEM_REQUIRE_NEO4J") == "1" and not _neo4j_passed and exitstatus == 0:
        session.exitstatus = 1
        print("\nFAILED: GRAPHMEM_REQUIRE_NEO4J=1 but no Neo4j test passed", flush=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Every test that uses the real Neo4j carries the ``neo4j`` marker (``-m neo4j`` selects them)."""
    for item in items:
        if "neo4j_uri" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.neo4j)


# --- files a test leaves for people to look at (screenshots), listed at the end of every run ------

_artifacts: list[tuple[str, Path]] = []


@pytest.fixture
def report_artifact(request):
    """``report_artifact(path)``: list ``path`` in the run's closing summary (pytest captures a test's
    own prints, so CI's output would not show them when the test passes)."""

    def report(path: Path) -> None:
        _artifacts.append((request.node.nodeid, path))

    return report


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _artifacts:
        terminalreporter.section("artifacts")
        for nodeid, path in _artifacts:
            terminalreporter.write_line(f"{nodeid}: screenshot saved to {path}")
