"""Servers with manners (issue 22), as real processes over HTTP: `graphmem serve` and `graphmem mcp
--http` print their URLs on start, the REST server logs each request at INFO with the key's name
(never the key), answers /health, serves /docs from the package (no CDN; rendered by a real headless
Chromium) and declares its API-key schemes in the OpenAPI schema."""

from __future__ import annotations

import gzip
import json
import re
import uuid

import httpx
import pytest
from servers import Link, free_port, graphmem_command, running, write_config
from test_browser import chrome  # noqa: F401 - the real-browser fixture

from graphmem import __version__
from graphmem.server.access import hash_key
from graphmem.testing import ScriptedLLMServer

KEY = "key-ann-" + uuid.uuid4().hex


@pytest.fixture(scope="module")
def rest(tmp_path_factory):
    folder = tmp_path_factory.mktemp("manners")
    (folder / "keys.json").write_text(json.dumps({"keys": [{"name": "ann-app", "sha256": hash_key(KEY), "users": ["ann"]}]}))
    with ScriptedLLMServer() as llm:
        config = write_config(folder, llm.base_url, "embedded")
        port = free_port()
        args = graphmem_command("serve", "--config", str(config), "--keys", str(folder / "keys.json"), "--port", str(port))
        with running(args, f"http://127.0.0.1:{port}/health", folder / "server.log"):
            yield f"http://127.0.0.1:{port}", folder / "server.log"


def test_serve_prints_its_urls_and_logs_requests_by_key_name(rest):
    url, log = rest
    with httpx.Client(base_url=url, headers={"X-API-Key": KEY}, timeout=30) as c:
        assert c.post("/memories", json={"messages": [{"role": "user", "content": "hi"}], "user_id": "ann", "infer": False}).status_code == 200
        assert c.get("/memories", params={"user_id": "bob"}).status_code == 403
    assert httpx.get(f"{url}/memories", params={"user_id": "ann"}, headers={"Authorization": "Token wrong"}).status_code == 401
    text = log.read_text(errors="replace")
    assert f"REST API at {url}" in text and f"docs:   {url}/docs" in text and f"health: {url}/health" in text
    assert re.search(r"POST /memories 200 [\d.]+ms key=ann-app", text)
    assert re.search(r"GET /memories 403 [\d.]+ms key=ann-app", text)
    assert re.search(r"GET /memories 401 [\d.]+ms key=-", text)
    assert KEY not in text and "wrong" not in text


def test_health_says_the_store_answers_and_the_version(rest):
    url, _ = rest
    response = httpx.get(f"{url}/health")  # no key needed
    assert response.status_code == 200
    assert response.json() == {"status": "ok", "store": "reachable", "version": __version__}


def test_large_answers_are_compressed_for_clients_that_accept_it(rest):
    url, _ = rest
    with httpx.stream("GET", f"{url}/openapi.json", headers={"Accept-Encoding": "gzip"}) as schema:
        sent = b"".join(schema.iter_raw())  # the bytes on the wire
    assert schema.headers["content-encoding"] == "gzip"
    plain = httpx.get(f"{url}/openapi.json", headers={"Accept-Encoding": "identity"})
    assert "content-encoding" not in plain.headers and plain.json()["info"]["title"] == "graphmem"
    assert gzip.decompress(sent) == plain.content and len(sent) < len(plain.content) / 3
    assert "content-encoding" not in httpx.get(f"{url}/health", headers={"Accept-Encoding": "gzip"}).headers  # small: as is


def test_openapi_declares_the_key_schemes(rest):
    url, _ = rest
    schema = httpx.get(f"{url}/openapi.json").json()
    schemes = schema["components"]["securitySchemes"]
    assert schemes["ApiKey"] == {"type": "apiKey", "in": "header", "name": "X-API-Key",
                                 "description": schemes["ApiKey"]["description"]}
    assert schemes["Bearer"]["type"] == "http" and schemes["Bearer"]["scheme"] == "bearer"
    assert {"ApiKey": []} in schema["paths"]["/search"]["post"]["security"]
    assert "security" not in schema["paths"]["/health"]["get"]


def test_docs_come_from_the_package_not_a_cdn(rest):
    url, _ = rest
    page = httpx.get(f"{url}/docs").text
    assert "/static/swagger-ui/swagger-ui-bundle.js" in page and "/static/swagger-ui/swagger-ui.css" in page
    assert not re.search(r"""(src|href)=["']https?://""", page)  # nothing fetched from elsewhere
    bundle = httpx.get(f"{url}/static/swagger-ui/swagger-ui-bundle.js")
    assert bundle.status_code == 200 and len(bundle.content) > 100_000


def test_docs_render_offline_in_a_real_browser(rest, chrome):  # noqa: F811
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    url, _ = rest
    chrome.get(f"{url}/docs")
    wait = WebDriverWait(chrome, 60)
    wait.until(lambda d: "graphmem" in d.find_element(By.TAG_NAME, "body").text and d.find_elements(By.CSS_SELECTOR, ".opblock"))
    body = chrome.find_element(By.TAG_NAME, "body").text
    assert "/memories" in body and "/health" in body
    assert chrome.find_elements(By.CSS_SELECTOR, "button.authorize")  # the key schemes give an Authorize button


def test_mcp_http_prints_its_url(tmp_path):
    with ScriptedLLMServer() as llm:
        config = write_config(tmp_path, llm.base_url, "embedded")
        port = free_port()
        args = graphmem_command("mcp", "--http", "--user", "ann", "--port", str(port), "--config", str(config))
        with running(args, f"http://127.0.0.1:{port}/mcp", tmp_path / "mcp.log"):
            text = (tmp_path / "mcp.log").read_text(errors="replace")
            health = httpx.get(f"http://127.0.0.1:{port}/health", timeout=10)
    assert f"MCP (streamable HTTP) at http://127.0.0.1:{port}/mcp for user_id=ann" in text
    assert f"health: http://127.0.0.1:{port}/health" in text
    assert health.status_code == 200 and health.json() == {"status": "ok", "store": "reachable", "version": __version__}


@pytest.mark.neo4j
def test_health_answers_at_once_when_neo4j_goes_away_and_recovers_when_it_is_back(tmp_path, neo4j_uri):
    """/health is what a load balancer polls: it must answer within its timeout, not after the
    driver's transaction retries (15 s). Neo4j is real; the link to it is cut and restored."""
    host, port = neo4j_uri.rsplit("//", 1)[1].split(":")
    link = Link(host, int(port))
    with ScriptedLLMServer() as llm:
        config = write_config(tmp_path, llm.base_url, "neo4j", neo4j_uri=f"bolt://127.0.0.1:{link.port}")
        http_port = free_port()
        args = graphmem_command("serve", "--config", str(config), "--no-auth", "--port", str(http_port))
        url = f"http://127.0.0.1:{http_port}/health"
        with running(args, url, tmp_path / "server.log"):
            assert httpx.get(url, timeout=10).json()["status"] == "ok"
            link.cut()
            down = httpx.get(url, timeout=10)  # the old probe took 15-28 s here
            assert down.status_code == 503
            assert down.json() == {"status": "unavailable", "store": "unreachable: StoreUnavailableError", "version": __version__}
            link.restore()
            up = httpx.get(url, timeout=10)
            assert up.status_code == 200 and up.json()["store"] == "reachable"
        link.cut()
    assert "Traceback" not in (tmp_path / "server.log").read_text(errors="replace")
