"""Neo4j Browser, a main way users explore their graph, tried in a real browser from the URL that
`graphmem browse` prints (issue 46): the demo's stories go into the launcher's Neo4j through
graphmem, `graphmem browse` runs as a user runs it, and headless Chromium (Debian's chromium and
chromedriver through Selenium, as tests/test_browser.py) opens the printed URL against the Neo4j
Browser the launcher serves, runs the saved view and must draw the user's nodes. A screenshot is
saved and its path listed in the run's closing summary.

The test stays at the level of "the URL browse prints": where browse keeps its display copy is
browse's business."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
import uuid

import pytest
from test_browser import ARTIFACTS, _run_in_browser, chrome, neo4j_dims  # noqa: F401 - chrome is a fixture

from graphmem import Memory
from graphmem.cli.demo import STORIES
from graphmem.testing import FakeModel
from graphmem.testing.command import answer_demo_stories


def _tell_the_stories(neo4j_uri: str, user: str, tmp_path) -> dict:
    """The demo's stories for ``user`` through the real pipeline into Neo4j; the config browse reads."""
    store = {"provider": "neo4j", "config": {"url": neo4j_uri}}
    with FakeModel(dims=neo4j_dims(neo4j_uri)) as fake:
        answer_demo_stories(fake)
        config = fake.config(graph_store=store, history_db_path=str(tmp_path / "history.db"), context={"summary_every": 0})
        with Memory(config) as memory:
            for story in STORIES.values():
                for text, _ in story:
                    memory.add(text, user_id=user)
    return {"graph_store": store, "history_db_path": str(tmp_path / "history.db")}


def _browse(config: dict, user: str, tmp_path) -> str:
    """`graphmem browse --user USER` as a user runs it: the URL is its stdout's last line."""
    path = tmp_path / "browse.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHMEM_", "OPENAI_"))}
    env["GRAPHMEM_HOME"] = str(tmp_path / "home")
    done = subprocess.run([sys.executable, "-m", "graphmem.cli.main", "browse", "--user", user, "--config", str(path)],
                          env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    assert "open this URL and press Run" in done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_the_url_graphmem_browse_prints_draws_the_users_graph_in_neo4j_browser(chrome, neo4j_uri, tmp_path,  # noqa: F811
                                                                                report_artifact):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    user = f"browse-{uuid.uuid4().hex[:8]}"
    config = _tell_the_stories(neo4j_uri, user, tmp_path)
    try:
        url = _browse(config, user, tmp_path)
        assert url.startswith("http") and "cmd=edit" in url, url
        try:
            urllib.request.urlopen(url.split("?")[0], timeout=10).close()
        except OSError as exc:
            pytest.fail(f"browse printed {url}, but no Neo4j Browser answers there: {exc}")

        screenshot = ARTIFACTS / "neo4j-browser-user-graph.png"
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        try:
            _run_in_browser(chrome, url, "Displaying")  # connected, the saved view run, a result frame
            drawn = {"Jesica", "sister", "dog"}  # the user's current graph; badminton was retired
            WebDriverWait(chrome, 60).until(lambda d: drawn <= {t.text for t in d.find_elements(By.CSS_SELECTOR, "svg text")})
        finally:
            chrome.save_screenshot(str(screenshot))
            report_artifact(screenshot)
            print(f"screenshot: {screenshot}")
        frame = chrome.find_elements(By.CSS_SELECTOR, '[data-testid="frame"]')[0].text
        assert "purpose: a scope's current graph" in frame  # the saved view (user_graph) is what ran
        # the user's node and Desmond, sister, Jesica, dog; HAS_NAME twice, HAS_SISTER, HAS_PET
        assert "Displaying 5 nodes, 4 relationships" in frame and "Self (1)" in frame, frame
        shown = {t.text for t in chrome.find_elements(By.CSS_SELECTOR, "svg text")}
        assert {"HAS_SISTER", "HAS_NAME", "HAS_PET", "Desmond"} <= shown, shown
        assert "badminton" not in shown and "LOVES_PLAYING" not in shown  # retired: not part of the current graph
        assert screenshot.stat().st_size > 10_000  # a drawn page, not a blank one
    finally:
        with Memory({**config, "embedder": {"provider": "hashing", "config": {"dims": neo4j_dims(neo4j_uri)}}}) as memory:
            memory.delete_all(user_id=user)
