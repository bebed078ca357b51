"""Credentials in model and store URLs never show (issue 45, item 4): an LLM or embedder
``base_url`` like ``http://user:pass@host/v1`` (and a Neo4j url with a password) stays out of
reprs, exception texts (the wrapped SDK errors included), log lines, the server's log and error
bodies, and ``graphmem doctor``. Real parts: the scripted OpenAI-compatible server over HTTP with
the real ``openai`` client, ``graphmem serve`` and ``graphmem doctor`` as processes."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import traceback
from pathlib import Path

import httpx
import pytest
from conftest import ROOT, TEST_DIMS
from servers import free_port, graphmem_command, running

from graphmem import Memory
from graphmem.errors import EmbeddingError, GraphMemError, LLMUnavailableError
from graphmem.errors.redact import redact_text, redact_url
from graphmem.testing import ScriptedLLMServer
from graphmem.testing.scripted_server import Fault

PASSWORD = "hunter2-Pa55"
SECRETS = (PASSWORD, "sk-live0123456789abcdef")


def with_credentials(url: str) -> str:
    return url.replace("http://", f"http://bob:{PASSWORD}@", 1)


def config(tmp_path: Path, llm_url: str, embedder_url: str | None = None) -> dict:
    embedder = ({"provider": "openai", "config": {"base_url": embedder_url, "api_key": "sk-live0123456789abcdef",
                                                  "model": "text-embedding-3-small", "dims": TEST_DIMS, "max_retries": 0}}
                if embedder_url else {"provider": "hashing", "config": {"dims": TEST_DIMS}})
    return {"llm": {"provider": "openai_compatible", "config": {"base_url": llm_url, "api_key": "sk-live0123456789abcdef",
                                                                 "model": "scripted", "max_retries": 0, "timeout": 10}},
            "embedder": embedder,
            "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "graph")}},
            "history_db_path": str(tmp_path / "history.db"), "context": {"summary_every": 0}, "warm_up": False}


def assert_clean(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text


def closed_port_url() -> str:
    return f"http://bob:{PASSWORD}@127.0.0.1:{free_port()}/v1"


def test_redact_text_masks_userinfo_query_keys_tokens_and_keys():
    text = (f"at http://bob:{PASSWORD}@h:1/v1 and bolt://neo4j:p@ss@db:7687 ?api-key=abc123&x=1 "
            "Authorization: Bearer abcdefghijkl sk-proj-0123456789")
    clean = redact_text(text)
    assert "http://h:1/v1" in clean and "bolt://db:7687" in clean and "api-key=***&x=1" in clean
    assert "Bearer ***" in clean and "sk-***" in clean and PASSWORD not in clean and "p@ss" not in clean
    assert redact_url("https://x.example/v1?key=AIza123&alt=json") == "https://x.example/v1?key=***&alt=json"
    assert redact_text("nothing here: http://host/v1, user@example.com") == "nothing here: http://host/v1, user@example.com"


def test_reprs_show_no_credentials(tmp_path):
    cfg = config(tmp_path, with_credentials("http://127.0.0.1:9/v1"), with_credentials("http://127.0.0.1:9/v1"))
    cfg["graph_store"] = {"provider": "neo4j", "config": {"url": f"bolt://neo4j:{PASSWORD}@127.0.0.1:9", "password": PASSWORD}}
    from graphmem.config import MemoryConfig

    loaded = MemoryConfig.load(cfg)
    assert_clean(repr(loaded))
    assert_clean(str(loaded))
    assert "127.0.0.1:9/v1" in repr(loaded) and "bolt://127.0.0.1:9" in repr(loaded)  # the address still shows
    from graphmem.factory import build_embedder, build_llm

    assert_clean(repr(build_llm(loaded.llm)))
    assert_clean(repr(build_embedder(loaded.embedder)))


def test_a_refusing_or_unreachable_model_raises_errors_without_credentials(tmp_path):
    with ScriptedLLMServer() as server:
        server.inject(Fault.SERVER_ERROR, times=5)
        with Memory(config(tmp_path, with_credentials(server.base_url))) as m:
            with pytest.raises(LLMUnavailableError) as refused:
                m.add("I live in Lisbon", user_id="alice")
            assert_clean(repr(m))
            assert_clean(repr(m.config))
    with Memory(config(tmp_path / "b", closed_port_url())) as m:
        with pytest.raises(LLMUnavailableError) as unreachable:
            m.add("I live in Lisbon", user_id="alice")
    with Memory(config(tmp_path / "c", closed_port_url(), closed_port_url())) as m:
        with pytest.raises(EmbeddingError) as embedder:
            m.search("Lisbon", user_id="alice")
    for caught in (refused, unreachable, embedder):
        assert "127.0.0.1" in str(caught.value)  # still says where
        assert_clean(str(caught.value))
        assert_clean("".join(traceback.format_exception(caught.value)))  # the wrapped openai/httpx errors too


def test_http_client_log_lines_show_no_credentials(tmp_path, caplog):
    with ScriptedLLMServer() as server, caplog.at_level(logging.DEBUG):
        url = with_credentials(server.base_url)
        server.inject(Fault.SERVER_ERROR, times=5)
        with Memory(config(tmp_path, url, url)) as m:
            m.search("Lisbon", user_id="alice")  # the embedder's request, logged by the HTTP client
            with pytest.raises(GraphMemError):
                m.add("I live in Lisbon", user_id="alice")
    assert "/v1/embeddings" in caplog.text and "/v1/chat/completions" in caplog.text  # the lines are there
    assert_clean(caplog.text)


def test_server_log_and_error_bodies_show_no_credentials(tmp_path):
    with ScriptedLLMServer() as server:
        server.inject(Fault.SERVER_ERROR, times=50)
        path = tmp_path / "config.json"
        path.write_text(json.dumps(config(tmp_path, with_credentials(server.base_url))), encoding="utf-8")
        port = free_port()
        args = graphmem_command("serve", "--config", str(path), "--no-auth", "--port", str(port))
        log = tmp_path / "server.log"
        with running(args, f"http://127.0.0.1:{port}/openapi.json", log):
            answer = httpx.post(f"http://127.0.0.1:{port}/memories", timeout=60,
                                json={"messages": [{"role": "user", "content": "I live in Lisbon"}], "user_id": "alice"})
        assert answer.status_code == 502 and answer.json()["error"] == "LLMUnavailableError"
        assert_clean(answer.text)
    text = log.read_text(encoding="utf-8", errors="replace")
    assert "LLMUnavailableError" in text  # the failure is logged, with its address
    assert_clean(text)


def test_doctor_output_shows_no_credentials(tmp_path):
    with ScriptedLLMServer() as server:
        server.inject(Fault.SERVER_ERROR, times=50)
        cfg = config(tmp_path, with_credentials(server.base_url), with_credentials(server.base_url))
        cfg["graph_store"] = {"provider": "neo4j", "config": {"url": f"bolt://neo4j:{PASSWORD}@127.0.0.1:{free_port()}"}}
        path = tmp_path / "config.json"
        path.write_text(json.dumps(cfg), encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "graphmem.cli.main", "doctor", "--config", str(path)],
                              capture_output=True, text=True, timeout=180, cwd=ROOT)
    assert done.returncode == 1
    assert "model: scripted at http://127.0.0.1" in done.stdout and "store: Neo4j bolt://127.0.0.1" in done.stdout
    assert_clean(done.stdout + done.stderr)


def test_mcp_error_and_log_show_no_credentials(tmp_path):
    """``graphmem mcp --http``: a tool call whose model refuses answers a tool error, and the server
    logs the failure with its address, neither with the credentials."""
    import asyncio

    from mcp.client import Client

    with ScriptedLLMServer() as server:
        server.inject(Fault.SERVER_ERROR, times=50)
        path = tmp_path / "config.json"
        path.write_text(json.dumps(config(tmp_path, with_credentials(server.base_url))), encoding="utf-8")
        port = free_port()
        args = graphmem_command("mcp", "--http", "--port", str(port), "--user", "alice", "--no-auth", "--config", str(path))
        log = tmp_path / "mcp.log"

        async def call() -> str:
            async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=60) as client:
                result = await client.call_tool("add_memory", {"messages": "I live in Lisbon"})
                assert result.is_error
                return str(result.content[0].text)

        with running(args, f"http://127.0.0.1:{port}/mcp", log):
            answer = asyncio.run(call())
    assert "LLMUnavailableError" in answer
    assert_clean(answer)
    text = log.read_text(encoding="utf-8", errors="replace")
    assert "tool add_memory failed: LLMUnavailableError" in text and "127.0.0.1" in text
    assert_clean(text)
