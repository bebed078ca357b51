"""Test helpers: start graphmem's servers as real processes (configured for the scripted LLM server
and a real store) and wait until they answer."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from conftest import TEST_DIMS

from graphmem.testing.links import BOLT_COMMIT, CommitCut, Link  # noqa: F401 - the tests' links, shared with benchmarks/faults/fault_soak.py


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def write_config(folder: Path, llm_base_url: str, store: str, neo4j_uri: str | None = None) -> Path:
    graph_store = ({"provider": "neo4j", "config": {"url": neo4j_uri}} if store == "neo4j"
                   else {"provider": "embedded", "config": {"path": str(folder / "graph")}})
    config = {
        "llm": {"provider": "openai_compatible", "config": {"base_url": llm_base_url, "api_key": "k", "model": "scripted",
                                                             "timeout": 20, "max_retries": 0}},
        "embedder": {"provider": "hashing", "config": {"dims": TEST_DIMS}},
        "graph_store": graph_store,
        "history_db_path": str(folder / "history.db"),
        "context": {"summary_every": 0},
    }
    path = folder / "config.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return path


def graphmem_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "graphmem.cli.main", *args]


@contextmanager
def running(args: list[str], ready_url: str, log: Path, timeout: float = 90.0) -> Iterator[subprocess.Popen]:
    """Start a server process, wait until ``ready_url`` answers, stop it at the end."""
    with open(log, "wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"server exited with {proc.returncode}: {log.read_text(errors='replace')[-2000:]}")
            try:
                httpx.get(ready_url, timeout=2)
                break
            except httpx.HTTPError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"server did not answer at {ready_url}: {log.read_text(errors='replace')[-2000:]}") from None
                time.sleep(0.2)
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@contextmanager
def serving_in_thread(app: Any) -> Iterator[str]:
    """An ASGI app (REST, inspector or MCP over HTTP) under uvicorn in a thread of this process, on a
    free loopback port; yields its base URL. For tests that watch what the app does in-process."""
    import uvicorn

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(20)
