"""The README's offline story from the shell, as a newcomer runs it, with the model hub unreachable:
`graphmem init` (the offline profile: nothing to download), `graphmem fake-llm --script
examples/moves.json`, "I live in Boston" then "I moved to Denver", and "where do I live?" answers
"Lives in Denver" first through every door: the CLI, REST, MCP and the inspector in headless Chromium.
Every process is a real one, every client the real one (issue 34)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from servers import free_port, graphmem_command
from test_browser import chrome  # noqa: F401 - a fixture
from test_inspector import by_id, wait

ROOT = Path(__file__).resolve().parent.parent
DEAD = "http://127.0.0.1:9"  # nothing listens there: the hub, and any proxy to the internet, are unreachable


@pytest.fixture
def newcomer(tmp_path):
    """A fresh folder and home, no key, the hub and the internet unreachable; the fake model running
    from the README's script; `graphmem init` done."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHMEM_", "OPENAI_", "HF_"))}
    env.update(GRAPHMEM_HOME=str(tmp_path / "home"), HF_ENDPOINT=DEAD, HTTP_PROXY=DEAD, HTTPS_PROXY=DEAD, http_proxy=DEAD,
               https_proxy=DEAD, NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost", PYTHONUNBUFFERED="1")
    work = tmp_path / "project"
    work.mkdir()
    port = free_port()
    log = tmp_path / "fake.log"
    with open(log, "wb") as out:
        fake = subprocess.Popen(graphmem_command("fake-llm", "--port", str(port), "--script", str(ROOT / "examples" / "moves.json")),
                                cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while "stop with Ctrl-C" not in log.read_text(errors="replace"):
            assert fake.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.1)

        def cli(*args: str) -> str:
            done = subprocess.run(graphmem_command(*args), cwd=work, env=env, capture_output=True, text=True, timeout=180)
            assert done.returncode == 0, done.stdout + done.stderr
            return done.stdout

        cli("init", "--llm-base-url", f"http://127.0.0.1:{port}/v1")  # the README's port is 8790; a test takes a free one
        yield {"cli": cli, "env": env, "work": work, "home": tmp_path / "home", "tmp": tmp_path, "fake_log": log}
    finally:
        fake.terminate()
        fake.wait(20)


def _tell_the_story(cli) -> None:
    boston = cli("add", "I live in Boston", "--user", "alice", "--timestamp", "2023-03-01")
    assert "alice -[LIVES_IN]-> Boston" in boston
    denver = cli("add", "I moved to Denver last month", "--user", "alice", "--timestamp", "2024-06-15")
    assert "UPDATE     memory" in denver and "Lives in Denver" in denver, denver


def test_offline_profile_needs_no_download(newcomer):
    config = (newcomer["work"] / "graphmem.json").read_text()
    assert '"provider": "hashing"' in config and "profile 'offline'" in config
    added = newcomer["cli"]("add", "I prefer window seats", "--user", "bob", "--no-infer").splitlines()
    assert added[0].startswith("add ") and added[1].startswith("ADD")  # the add's id, then what it did
    assert "I prefer window seats" in newcomer["cli"]("search", "which seats?", "--user", "bob")
    assert not (newcomer["home"] / "models").exists()  # nothing was downloaded, nothing was tried


def test_the_move_answers_denver_first_through_every_door(newcomer, chrome):  # noqa: F811 - the fixture imported above
    cli = newcomer["cli"]
    _tell_the_story(cli)
    found = cli("search", "where do I live?", "--user", "alice")
    assert found.splitlines()[0].startswith("memory ") and ": Lives in Denver" in found.splitlines()[0], found
    assert "Lives in Boston" not in found
    assert "problem" not in newcomer["fake_log"].read_text() and "not one of" not in newcomer["fake_log"].read_text()

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    serve = graphmem_command("serve", "--no-auth", "--port", str(port))
    with _in(newcomer, serve, f"{url}/health"):
        answer = httpx.post(f"{url}/search", json={"query": "where do I live?", "user_id": "alice"}, timeout=60).json()
        assert answer["results"][0]["memory"] == "Lives in Denver"
        assert [r["destination"] for r in answer["relations"]] == ["Denver"]
        chrome.get(f"{url}/ui?user_id=alice")
        wait(chrome, lambda d: by_id(d, "main").is_displayed())
        by_id(chrome, "query").send_keys("where do I live?")
        by_id(chrome, "search").click()
        wait(chrome, lambda d: " for “where do I live?”" in by_id(d, "memories-caption").text)
        first = by_id(chrome, "memories").find_element("css selector", "tbody tr")
        assert "Lives in Denver" in first.text, first.text

    assert _mcp_search(newcomer)[0] == "Lives in Denver"


@contextmanager
def _in(newcomer, args: list[str], ready: str) -> Iterator[None]:
    """A server process started in the newcomer's folder and environment, until it answers ``ready``."""
    log = newcomer["tmp"] / "serve.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(args, cwd=newcomer["work"], env=newcomer["env"], stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")
            try:
                httpx.get(ready, timeout=2)
                break
            except httpx.HTTPError:
                time.sleep(0.2)
        yield
    finally:
        proc.terminate()
        proc.wait(20)


def _mcp_search(newcomer) -> list[str]:
    from mcp.client import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(command=sys.executable, args=graphmem_command("mcp", "--user", "alice")[1:],
                                   env=newcomer["env"], cwd=str(newcomer["work"]))

    async def main() -> list[str]:
        async with Client(params, read_timeout_seconds=60) as client:
            result = await client.call_tool("search_memory", {"query": "where do I live?"})
            assert not result.is_error, result.content
            found = result.structured_content or json.loads(result.content[0].text)
            return [m["memory"] for m in found["results"]]

    return asyncio.run(main())
