"""The launcher's Python API warms like its CLI (``start(warm=...)``): one real server of its own,
on free ports and a fresh data folder, started twice. What the warming plans is tested on the
suite's server (tests/test_prewarm.py); here, that ``start`` runs it or not."""

from __future__ import annotations

import socket

import pytest
from conftest import ROOT

from graphmem.launcher import Neo4jLauncher, build_parser


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.neo4j
def test_start_warms_unless_told_not_to(tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHMEM_NEO4J_SKIP_SELFCHECK", "1")  # ~3 s a start; the suite's server ran it
    launcher = Neo4jLauncher(root=ROOT, bolt_port=_free_port(), http_port=_free_port(), data_dir=tmp_path / "data",
                             heap="512m", pagecache="64m")
    try:
        uri = launcher.start()  # warm=True by default, as the CLI's start: the warming ran and said why it had nothing to do
        assert launcher.warmed == "nothing to warm: the database holds no graphmem schema yet (the first store's set-up creates it)"
        launcher.warmed = None
        assert launcher.start() == uri and launcher.warmed is None  # already running: returned as it is
        launcher.stop()
        assert launcher.start(warm=False) == uri and launcher.warmed is None  # started, not warmed
    finally:
        launcher.stop()
    assert build_parser().parse_args(["start", "--no-warm"]).warm is False  # what main passes as start(warm=...)
