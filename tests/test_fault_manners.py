"""Faults with manners (issue 33), against real server processes: a full disk answers a clear error
and deletes / forget still free space; /health answers at once while the store does not; error
bodies of 5xx answers say what failed without internal addresses (those go to the server log)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid

import httpx
import pytest
from conftest import TEST_DIMS
from mcp.client import Client
from servers import free_port, graphmem_command, running, write_config

from graphmem.testing import ScriptedLLMServer
from graphmem.testing.links import Link


def _can_mount_tmpfs(folder) -> bool:
    """A size-limited file system without root: a tmpfs in a user and mount namespace (unshare -rm)."""
    if shutil.which("unshare") is None:
        return False
    probe = folder / "probe"
    probe.mkdir()
    done = subprocess.run(["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=64k tmpfs {probe}"], capture_output=True, timeout=30)
    return done.returncode == 0


def _disk_config(tmp_path, disk, llm_url: str):
    """A config beside the small disk (the disk is mounted over in the server's namespace), its data on it."""
    config = tmp_path / "config.json"
    config.write_text(json.dumps({
        "llm": {"provider": "openai_compatible", "config": {"base_url": llm_url, "api_key": "k", "model": "scripted"}},
        "embedder": {"provider": "hashing", "config": {"dims": TEST_DIMS}},
        "graph_store": {"provider": "embedded", "config": {"path": str(disk / "graph")}},
        "history_db_path": str(disk / "history.db"), "context": {"summary_every": 0},
    }))
    return config


def test_a_full_disk_answers_a_clear_error_and_deletes_still_free_space(tmp_path):
    """The REST server's store and history on a real 4 MB file system (tmpfs), filled by adds."""
    if not _can_mount_tmpfs(tmp_path):
        pytest.skip("this machine cannot mount a size-limited file system without root (unshare -rm + tmpfs)")
    disk = tmp_path / "disk"
    disk.mkdir()
    with ScriptedLLMServer() as llm:
        config = _disk_config(tmp_path, disk, llm.base_url)
        port = free_port()
        serve = " ".join(graphmem_command("serve", "--config", str(config), "--no-auth", "--port", str(port)))
        args = ["unshare", "-rm", "sh", "-c", f"mount -t tmpfs -o size=4m tmpfs {disk} && exec {serve}"]
        with running(args, f"http://127.0.0.1:{port}/health", tmp_path / "server.log"), \
                httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=60) as c:
            ids, full = [], None
            for i in range(2000):
                answer = c.post("/memories", json={"messages": [{"role": "user", "content": f"note {i} " + "x" * 3000}],
                                                  "user_id": f"u{i % 2}", "infer": False})
                if answer.status_code != 200:
                    full = answer
                    break
                ids.append(answer.json()["results"][0]["id"])
            assert full is not None, "the 4 MB disk never filled"
            assert full.status_code == 507, full.text
            assert full.json()["error"] == "StorageFullError" and "disk" in full.json()["detail"]
            assert str(disk) not in full.text and "rollback" not in full.text
            before = len(c.get("/memories", params={"user_id": "u0", "limit": 10_000}).json()["results"])
            again = c.post("/memories", json={"messages": [{"role": "user", "content": "one more"}], "user_id": "u0", "infer": False})
            assert again.status_code == 507  # still full: refused whole, nothing written
            assert len(c.get("/memories", params={"user_id": "u0", "limit": 10_000}).json()["results"]) == before
            deleted = c.delete(f"/memories/{ids[0]}")  # deleting works on the full disk
            assert deleted.status_code == 200, deleted.text
            assert c.get(f"/memories/{ids[0]}").status_code == 404
            forgotten = c.delete("/ui/api/user", params={"user_id": "u1"})  # so does forgetting a user, which frees space
            assert forgotten.status_code == 200 and forgotten.json()["memories"] > 0, forgotten.text
            after = c.post("/memories", json={"messages": [{"role": "user", "content": "room again"}], "user_id": "u0", "infer": False})
            assert after.status_code == 200, after.text
            assert c.get("/memories", params={"user_id": "u1"}).json()["results"] == []
    log = (tmp_path / "server.log").read_text(errors="replace")
    assert "No space left on device" in log or "disk is full" in log  # the details are in the server log
    assert "released graphmem's reserve" in log


def _scripted_config(tmp_path, llm, store: str, neo4j_uri: str | None = None) -> str:
    return str(write_config(tmp_path, llm.base_url, store, neo4j_uri))


def test_a_failing_llm_is_502_without_its_address_in_the_body(tmp_path):
    with ScriptedLLMServer() as llm:
        llm.inject("server_error", times=100)
        port = free_port()
        args = graphmem_command("serve", "--config", _scripted_config(tmp_path, llm, "embedded"), "--no-auth", "--port", str(port))
        with running(args, f"http://127.0.0.1:{port}/health", tmp_path / "server.log"):
            answer = httpx.post(f"http://127.0.0.1:{port}/memories", timeout=60,
                                json={"messages": [{"role": "user", "content": "I live in Lima"}], "user_id": "ann"})
        address = llm.base_url.split("//")[1].split("/")[0]
    assert answer.status_code == 502
    body = answer.json()
    assert body["error"] == "LLMUnavailableError" and "LLM" in body["detail"], body
    assert address not in answer.text and "127.0.0.1" not in answer.text and "http" not in answer.text
    assert address in (tmp_path / "server.log").read_text(errors="replace")  # the operator sees where


def test_a_failing_llm_is_a_tool_error_without_its_address_over_mcp(tmp_path):
    with ScriptedLLMServer() as llm:
        llm.inject("server_error", times=100)
        address = llm.base_url.split("//")[1].split("/")[0]
        port = free_port()
        args = graphmem_command("mcp", "--http", "--user", "ann", "--port", str(port), "--config",
                                _scripted_config(tmp_path, llm, "embedded"))

        async def main() -> str:
            async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=60) as client:
                result = await client.call_tool("add_memory", {"messages": "I live in Lima"})
                assert result.is_error
                return result.content[0].text

        with running(args, f"http://127.0.0.1:{port}/health", tmp_path / "mcp.log"):
            text = asyncio.run(main())
    assert "LLMUnavailableError" in text and address not in text and "127.0.0.1" not in text
    assert address in (tmp_path / "mcp.log").read_text(errors="replace")


@pytest.mark.neo4j
def test_a_lost_store_is_503_without_its_address_and_health_answers_at_once(tmp_path, neo4j_uri):
    """Neo4j is real; the link to it is stalled (connections open, nothing answers: a server busy
    starting) and then cut."""
    host, port = neo4j_uri.rsplit("//", 1)[1].split(":")
    link = Link(host, int(port))
    user = f"u-{uuid.uuid4().hex[:6]}"
    with ScriptedLLMServer() as llm:
        config = _scripted_config(tmp_path, llm, "neo4j", f"bolt://127.0.0.1:{link.port}")
        http_port = free_port()
        base = f"http://127.0.0.1:{http_port}"
        args = graphmem_command("serve", "--config", config, "--no-auth", "--port", str(http_port))
        with running(args, f"{base}/health", tmp_path / "server.log"):
            assert httpx.get(f"{base}/health", timeout=10).json()["status"] == "ok"
            link.stall()
            for _ in range(3):  # each within the client's 5 s (the probe waits 1 s); the old one hung 14-18 s
                stalled = httpx.get(f"{base}/health", timeout=5)
                assert stalled.status_code == 503 and stalled.json()["store"] == "no answer within 1 s", stalled.text
            link.unstall()
            assert httpx.get(f"{base}/health", timeout=10).json()["status"] == "ok"
            link.cut()
            added = httpx.post(f"{base}/memories", timeout=60,
                               json={"messages": [{"role": "user", "content": "hi"}], "user_id": user, "infer": False})
            assert added.status_code == 503 and added.json()["error"] == "StoreUnavailableError", added.text
            assert "bolt" not in added.text and str(link.port) not in added.text and "127.0.0.1" not in added.text
            link.restore()
        link.cut()
    log = (tmp_path / "server.log").read_text(errors="replace")
    assert f"127.0.0.1:{link.port}" in log and "Traceback" not in log


def test_the_5xx_detail_names_the_failure_not_its_text():
    from graphmem.errors import LLMUnavailableError, StorageFullError, StoreUnavailableError
    from graphmem.server.views import public_detail

    for exc in (LLMUnavailableError("http://10.0.0.5:8000/v1 failed"), StoreUnavailableError("bolt://db.internal:7687 down"),
                StorageFullError("/srv/graphmem/history.db: disk full")):
        said = public_detail(exc)
        assert type(exc).__name__ in said and "10.0.0.5" not in said and "internal" not in said and "/srv" not in said
    assert sys.modules["graphmem.server.views"].HEALTH_WAIT == 1.0


@pytest.mark.parametrize("stop", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_stop_on_a_full_disk_keeps_every_change_and_says_so(tmp_path, stop):
    """``serve`` stopped on a full disk cannot compact its store at close. Before: Ctrl-C exited 1
    saying "nothing was written", though every acknowledged add was in the journal; SIGTERM ended the
    process before the store was closed at all. Now both close it, say what was kept, exit 0, and a
    server started on the same full disk shows every acknowledged add."""
    if not _can_mount_tmpfs(tmp_path):
        pytest.skip("this machine cannot mount a size-limited file system without root (unshare -rm + tmpfs)")
    disk, pid_file, code_file = tmp_path / "disk", tmp_path / "first.pid", tmp_path / "first.code"
    disk.mkdir()
    with ScriptedLLMServer() as llm:
        config = _disk_config(tmp_path, disk, llm.base_url)
        first, second = free_port(), free_port()
        serve = [" ".join(graphmem_command("serve", "--config", str(config), "--no-auth", "--port", str(p))) for p in (first, second)]
        # one mount namespace for both servers: the tmpfs (and what it holds) lives as long as the shell
        script = (f"mount -t tmpfs -o size=4m tmpfs {disk} || exit 9; {serve[0]} & echo $! > {pid_file}; wait $!; "
                  f"echo $? > {code_file}; exec {serve[1]}")
        with running(["unshare", "-rm", "sh", "-c", script], f"http://127.0.0.1:{first}/health", tmp_path / "server.log"):
            acked = []
            with httpx.Client(base_url=f"http://127.0.0.1:{first}", timeout=60) as c:
                for i in range(2000):
                    answer = c.post("/memories", json={"messages": [{"role": "user", "content": f"note {i} " + "x" * 3000}],
                                                      "user_id": "u0", "infer": False})
                    if answer.status_code != 200:
                        break
                    acked.append(answer.json()["results"][0]["id"])
            assert answer.status_code == 507 and acked, answer.text
            os.kill(int(pid_file.read_text()), stop)
            for _ in range(600):  # bounded wait for the first server's exit (the shell writes its status)
                if code_file.exists() and code_file.read_text().strip():
                    break
                time.sleep(0.1)
            log = (tmp_path / "server.log").read_text(errors="replace")
            assert code_file.read_text().strip() == "0", log[-3000:]
            assert "every change is kept" in log and "graphmem: error" not in log, log[-3000:]
            for _ in range(600):
                try:
                    stored = httpx.get(f"http://127.0.0.1:{second}/memories", params={"user_id": "u0", "limit": 10_000}, timeout=30)
                    break
                except httpx.HTTPError:
                    time.sleep(0.2)
            assert sorted(m["id"] for m in stored.json()["results"]) == sorted(acked)
