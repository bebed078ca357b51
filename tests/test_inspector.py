"""The memory inspector at /ui (graphmem/server/ui.py, graphmem/ui/) in a real headless chromium,
against the REST app under uvicorn on 127.0.0.1, on both stores, with tenant keys.

The story (test_browser.load_story): the user's names and badminton (2024-01-10), the sister and her
dog (2024-03-01), badminton retired on 2024-06-15. Screenshots go to $GRAPHMEM_SCREENSHOTS (default
/tmp/graphmem-screens), one folder per store; they are never committed.
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import httpx
import pytest
from conftest import TEST_DIMS
from helpers import make_memory
from servers import serving_in_thread
from test_browser import chrome, load_story  # noqa: F401 - chrome is a fixture
from test_package import wheel  # noqa: F401 - a fixture

from graphmem.aio import AsyncMemory
from graphmem.lifecycle.reindex import reindex
from graphmem.server.access import Tenant, Tenants, hash_key
from graphmem.server.rest import create_app
from graphmem.server.ui import UI_DIR
from graphmem.types import Scope

SCREENS = Path(os.environ.get("GRAPHMEM_SCREENSHOTS", "/tmp/graphmem-screens"))
BEFORE_END, AFTER_END = "2024-04-01", "2024-07-01"
SECRET = "the vault code is 7781 at Zanzibar"


def serving(memory, tenants: Tenants | None):
    """The REST app (with /ui) under uvicorn in a thread; yields its base URL."""
    return serving_in_thread(create_app(AsyncMemory(memory=memory), tenants))


@pytest.fixture
def world(store, server, tmp_path):
    """Two users of two tenants: alice (the story and two memories) and bob (a secret)."""
    alice, bob = f"alice-{uuid.uuid4().hex[:8]}", f"bob-{uuid.uuid4().hex[:8]}"
    keys = {"alice": "ka-" + uuid.uuid4().hex, "bob": "kb-" + uuid.uuid4().hex}
    tenants = Tenants({hash_key(keys["alice"]): Tenant("alice-app", frozenset({alice})),
                       hash_key(keys["bob"]): Tenant("bob-app", frozenset({bob}))})
    memory = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "history.db"))
    load_story(store, Scope.of(user_id=alice), TEST_DIMS)
    reindex(store, memory.embedder, [Scope.of(user_id=alice)])  # the story is written without facts, as an old store
    memory.add([{"role": "user", "content": "I love playing badminton on Sundays"}], user_id=alice, infer=False,
               metadata={"topic": "sport"})
    memory.add([{"role": "user", "content": "My sister Jesica has a dog"}], user_id=alice, infer=False,
               metadata={"topic": "family"})
    memory.add([{"role": "user", "content": SECRET}], user_id=bob, infer=False)
    try:
        with serving(memory, tenants) as url:
            yield {"url": url, "alice": alice, "bob": bob, "keys": keys, "store": store, "memory": memory}
    finally:
        for user in (alice, bob):
            store.delete_all(Scope.of(user_id=user))


def screens(store) -> Path:
    folder = SCREENS / ("neo4j" if hasattr(store, "url") else "embedded")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def api(world, key: str, path: str, method: str = "GET", **params) -> httpx.Response:
    return httpx.request(method, world["url"] + path, params=params, headers={"X-API-Key": world["keys"][key]}, timeout=30)


# --- browser helpers -------------------------------------------------------------------------------


def wait(driver, condition, timeout: float = 30):
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(condition)


def by_id(driver, element_id: str):
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, element_id)


def table_text(driver, element_id: str) -> str:
    """The rows' text, one line per row (shown or on a hidden tab)."""
    return driver.execute_script(
        "return [...document.getElementById(arguments[0]).tBodies[0].rows].map(r => r.innerText || r.textContent).join('\\n')",
        element_id)


def sign_in(driver, world, user: str, as_of: str | None = None) -> None:
    """Open /ui for ``user``, type alice's key into the key form, wait until the user is shown."""
    url = f"{world['url']}/ui?user_id={user}" + (f"&as_of={as_of}" if as_of else "")
    driver.get(url)
    wait(driver, lambda d: d.find_element("id", "key-form").is_displayed())
    by_id(driver, "api-key").send_keys(world["keys"]["alice"])
    by_id(driver, "use-key").click()


def shown(driver) -> bool:
    return by_id(driver, "main").is_displayed() and bool(table_text(driver, "relations"))


def open_tab(driver, name: str) -> None:
    by_id(driver, f"tab-{name}").click()
    wait(driver, lambda d: d.find_element("id", f"panel-{name}").is_displayed())


def graph_drawn_after(driver, before: str | None) -> None:
    wait(driver, lambda d: d.execute_script("return document.body.dataset.graphDrawn || null") not in (None, before))


# --- the test ----------------------------------------------------------------------------------------


def test_inspector_for_a_tenant_key(chrome, world):  # noqa: F811 - the fixture imported above
    """Opens for alice's key, shows her memories and relations, time-travels, shows a timeline,
    forgets an entity (page and API), and refuses bob's user without leaking anything."""
    driver, folder = chrome, screens(world["store"])
    sign_in(driver, world, world["alice"], as_of=BEFORE_END)
    wait(driver, shown)
    assert world["keys"]["alice"] not in driver.current_url
    assert driver.execute_script("return sessionStorage.getItem('graphmem-inspector-key')") == world["keys"]["alice"]
    _memories_screen(driver, world, folder)
    _graph_screen(driver, folder)
    same_holds_as_server(driver, world, None)
    _known_at_screen(driver, world, folder)
    _timeline_screen(driver, folder)
    _forget_screen(driver, world, folder)
    _other_tenant(driver, world, folder)


def _memories_screen(driver, world, folder: Path) -> None:
    assert by_id(driver, "tab-graph").get_attribute("aria-selected") == "true"  # an as_of link opens the graph
    open_tab(driver, "memories")
    rows = table_text(driver, "memories")
    assert "I love playing badminton on Sundays" in rows and "My sister Jesica has a dog" in rows
    assert SECRET not in driver.page_source
    by_id(driver, "query").send_keys("badminton")
    by_id(driver, "search").click()
    wait(driver, lambda d: " for “badminton”" in d.find_element("id", "memories-caption").text)
    first = by_id(driver, "memories").find_element("css selector", "tbody tr")
    assert "badminton" in first.text
    scores = first.find_element("css selector", ".scores").text
    assert "vector" in scores and "bm25" in scores, scores
    driver.save_screenshot(str(folder / "1-memories-search.png"))
    first.find_element("xpath", ".//button[text()='History']").click()
    wait(driver, lambda d: d.find_element("id", "history").is_displayed())
    assert "ADD" in by_id(driver, "history").text


def _graph_screen(driver, folder: Path) -> None:
    """As of April 2024 the retired LOVES_PLAYING holds; the slider moved to now drops it."""
    open_tab(driver, "graph")
    relations = table_text(driver, "relations")
    assert "LOVES_PLAYING" in relations and "HAS_SISTER" in relations and "HAS_PET" in relations
    assert by_id(driver, "as-of-label").text == BEFORE_END
    assert driver.execute_script("return window.inspectorCy.edges().map(e => e.data('label'))").count("LOVES_PLAYING") == 1
    driver.save_screenshot(str(folder / "2-graph-before-slider.png"))
    from selenium.webdriver.common.keys import Keys

    drawn = driver.execute_script("return document.body.dataset.graphDrawn")
    by_id(driver, "as-of-slider").send_keys(Keys.END)  # keyboard: the slider to "now"
    graph_drawn_after(driver, drawn)
    assert by_id(driver, "as-of-label").text == "now"
    assert driver.execute_script("return window.inspectorTimes.graphFetchMs") == 0  # re-marked in the page, no request
    assert "as_of" not in driver.current_url
    relations = table_text(driver, "relations")
    assert "LOVES_PLAYING" not in relations and "HAS_NAME" in relations
    assert "LOVES_PLAYING" not in driver.execute_script("return window.inspectorCy.edges().map(e => e.data('label'))")
    driver.save_screenshot(str(folder / "3-graph-after-slider.png"))
    drawn = driver.execute_script("return document.body.dataset.graphDrawn")
    by_id(driver, "show-retired").click()  # retired relations drawn dashed and listed as retired
    graph_drawn_after(driver, drawn)
    assert "LOVES_PLAYING" in table_text(driver, "relations") and "retired" in table_text(driver, "relations")
    dashed = driver.execute_script("return window.inspectorCy.edges('[retired = 1]').map(e => e.style('line-style'))")
    assert dashed and set(dashed) == {"dashed"}
    by_id(driver, "show-retired").click()


#: instants around the story's times (T1 2024-01-10 09:00, T2 2024-03-01 09:00, T3 2024-06-15 10:00), ends included
INSTANTS = ("2024-01-01T00:00:00.000Z", "2024-01-10T09:00:00.000Z", "2024-03-01T08:59:59.999Z", "2024-04-01T00:00:00.000Z",
            "2024-06-15T09:59:59.999Z", "2024-06-15T10:00:00.000Z", "2024-07-01T00:00:00.000Z", None)


def same_holds_as_server(driver, world, known_at: str | None) -> None:
    """The slider re-marks relations in the page (a port of graphmem's time rule): at every instant,
    the page marks each relation as the server does for the same as_of and known_at."""
    for as_of in INSTANTS:
        mine = driver.execute_script("return window.inspectorHoldsAt(arguments[0])", as_of)
        params = {k: v for k, v in (("as_of", as_of), ("known_at", known_at)) if v}
        theirs = {r["id"]: r["holds"] for r in api(world, "alice", "/ui/api/graph", user_id=world["alice"], **params).json()["relations"]}
        assert mine == theirs, (as_of, known_at, mine, theirs)


def _known_at_screen(driver, world, folder: Path) -> None:
    """Known at May 2024, graphmem had not yet learnt (2024-06-15) that badminton ended: it holds
    now as known then. Known at February 2024, the sister (learnt 2024-03-01) is not there yet."""
    assert by_id(driver, "as-of-label").text == "now" and "LOVES_PLAYING" not in table_text(driver, "relations")
    by_id(driver, "known-at").send_keys("2024-05-01")
    by_id(driver, "as-of-go").click()
    wait(driver, lambda d: "LOVES_PLAYING" in table_text(d, "relations"))
    assert "HAS_SISTER" in table_text(driver, "relations")
    loves = next(line for line in table_text(driver, "relations").splitlines() if "LOVES_PLAYING" in line)
    assert "2024-06-15" not in loves and "holds" in loves  # its end was learnt later: not shown as known then
    assert "known_at=2024-05-01" in driver.current_url
    assert "as graphmem knew it at 2024-05-01" in by_id(driver, "graph-caption").text
    driver.save_screenshot(str(folder / "3b-graph-known-at.png"))
    same_holds_as_server(driver, world, "2024-05-01")
    by_id(driver, "known-at").clear()
    by_id(driver, "known-at").send_keys("2024-02-01")
    by_id(driver, "as-of-go").click()
    wait(driver, lambda d: "HAS_SISTER" not in table_text(d, "relations"))
    assert "LOVES_PLAYING" in table_text(driver, "relations")
    same_holds_as_server(driver, world, "2024-02-01")
    by_id(driver, "as-of-now").click()  # back to now, as known now
    wait(driver, lambda d: "LOVES_PLAYING" not in table_text(d, "relations") and "HAS_SISTER" in table_text(d, "relations"))
    assert "known_at" not in driver.current_url and by_id(driver, "known-at").get_attribute("value") == ""


def _timeline_screen(driver, folder: Path) -> None:
    by_id(driver, "as-of").send_keys(BEFORE_END)
    by_id(driver, "as-of-go").click()
    wait(driver, lambda d: "LOVES_PLAYING" in table_text(d, "relations"))
    by_id(driver, "relations").find_element("xpath", ".//button[text()='badminton']").click()
    wait(driver, lambda d: d.find_element("id", "panel-entity").is_displayed())
    assert "badminton" in by_id(driver, "entity-title").text
    timeline = table_text(driver, "timeline")
    assert "LOVES_PLAYING" in timeline and "2024-01-10" in timeline and "2024-06-15" in timeline
    assert "love playing badminton" in timeline and "added by" in timeline and "retired by" in timeline  # fact, provenance
    assert "I love playing badminton on Sundays" in by_id(driver, "entity-memories").text
    # why: the add that retired badminton, resolved (the story's adds wrote no messages to the log)
    retired_by = by_id(driver, "timeline").find_element("xpath", ".//tr[contains(., 'LOVES_PLAYING')]//button[@class='add-id'][last()]")
    retired_by.click()
    wait(driver, lambda d: "retired:" in d.find_element("id", "entity-why").text)
    why = by_id(driver, "entity-why").text
    assert f"Add {retired_by.get_attribute('title')}" in why and "LOVES_PLAYING badminton" in why
    assert "no message of this add is in the conversation log" in why and "asserted:" in why and "HAS_NAME" in why
    driver.save_screenshot(str(folder / "4-entity-timeline.png"))


def _forget_screen(driver, world, folder: Path) -> None:
    by_id(driver, "forget-entity").click()
    wait(driver, lambda d: d.find_element("id", "confirm").is_displayed())
    driver.save_screenshot(str(folder / "5-forget-confirm.png"))
    by_id(driver, "confirm-ok").click()
    wait(driver, lambda d: "forgot" in d.find_element("id", "status").text)
    assert "was forgotten" in by_id(driver, "entity-title").text
    open_tab(driver, "graph")
    wait(driver, lambda d: "badminton" not in table_text(d, "relations"))
    assert "HAS_SISTER" in table_text(driver, "relations")
    driver.save_screenshot(str(folder / "6-after-forget.png"))
    graph = api(world, "alice", "/ui/api/graph", user_id=world["alice"], as_of=BEFORE_END).json()
    assert "badminton" not in {e["name"] for e in graph["entities"]}
    assert all("badminton" not in (r["source"], r["destination"]) for r in graph["relations"])
    memories = api(world, "alice", "/ui/api/memories", user_id=world["alice"], include_invalidated=True).json()["results"]
    assert [m["memory"] for m in memories] == ["My sister Jesica has a dog"]
    assert api(world, "alice", "/ui/api/entity", user_id=world["alice"], name="badminton").json()["relations"] == []


def _other_tenant(driver, world, folder: Path) -> None:
    """Alice's key on bob's user: an error on the page, nothing of bob's in it."""
    driver.get(f"{world['url']}/ui?user_id={world['bob']}")
    wait(driver, lambda d: d.find_element("id", "error").is_displayed())
    assert "403" in by_id(driver, "error").text
    assert not by_id(driver, "main").is_displayed()
    assert SECRET not in driver.page_source and "Zanzibar" not in driver.page_source
    driver.save_screenshot(str(folder / "7-other-tenant-refused.png"))


def test_inspector_api_keeps_tenants_apart(world):
    """Every inspector route refuses another tenant's user, and a memory id of another user answers
    exactly like an unknown one."""
    alice, bob = world["alice"], world["bob"]
    bob_memory = api(world, "bob", "/ui/api/memories", user_id=bob).json()["results"][0]["id"]
    for method, path, params in [("GET", "/ui/api/memories", {}), ("GET", "/ui/api/graph", {}),
                                 ("GET", "/ui/api/entity", {"name": "Zanzibar"}), ("GET", "/ui/api/export", {}),
                                 ("DELETE", "/ui/api/entity", {"name": "Zanzibar"}), ("DELETE", "/ui/api/user", {}),
                                 ("GET", "/ui/api/provenance", {"add_id": "Zanzibar"})]:
        refused = api(world, "alice", path, method, user_id=bob, **params)
        assert refused.status_code == 403, (path, refused.text)
        assert SECRET not in refused.text and "Zanzibar" not in refused.text
    for method, path in [("GET", "/ui/api/history"), ("DELETE", "/ui/api/memory")]:
        theirs = api(world, "alice", path, method, user_id=alice, memory_id=bob_memory)
        unknown = api(world, "alice", path, method, user_id=alice, memory_id=str(uuid.uuid4()))
        assert theirs.status_code == unknown.status_code == 404
        assert theirs.json()["error"] == unknown.json()["error"] == "NotFoundError"
    # bob's add asked about in alice's scope answers exactly as an id nobody wrote
    (said,) = world["store"].conversation(Scope.of(user_id=bob), 10).messages
    asked = {i: api(world, "alice", "/ui/api/provenance", "GET", user_id=alice, add_id=i) for i in (said.add_id, str(uuid.uuid4()))}
    assert [r.status_code for r in asked.values()] == [404, 404]
    theirs, unknown = (r.json() | {"detail": r.json()["detail"].replace(i, "ID")} for i, r in asked.items())
    assert theirs == unknown and theirs["error"] == "NotFoundError"
    assert SECRET not in str(theirs)
    assert httpx.get(world["url"] + "/ui/api/session").status_code == 401
    assert api(world, "bob", "/ui/api/memories", user_id=bob).json()["results"][0]["memory"] == SECRET
    assert api(world, "bob", "/ui/api/user", "DELETE", user_id=bob).status_code == 200  # bob forgets bob
    assert api(world, "bob", "/ui/api/memories", user_id=bob, include_invalidated=True).json()["results"] == []
    assert api(world, "alice", "/ui/api/memories", user_id=alice).json()["results"]  # alice untouched


def test_inspector_export_and_page_headers(world):
    """The export holds every relation version and the memories; the page forbids other origins."""
    alice = world["alice"]
    doc = api(world, "alice", "/ui/api/export", user_id=alice, format="json").json()
    assert {r["relationship"] for r in doc["relations"]} >= {"LOVES_PLAYING", "HAS_PET"}
    assert not next(r for r in doc["relations"] if r["relationship"] == "LOVES_PLAYING")["current"]
    assert {m["memory"] for m in doc["memories"]} == {"I love playing badminton on Sundays", "My sister Jesica has a dog"}
    graphml = api(world, "alice", "/ui/api/export", user_id=alice, format="graphml")
    assert graphml.headers["content-type"].startswith("application/graphml+xml") and "LOVES_PLAYING" in graphml.text
    assert api(world, "alice", "/ui/api/export", user_id=alice, format="csv").status_code == 400
    page = httpx.get(world["url"] + "/ui")
    assert page.status_code == 200 and "script-src 'self'" in page.headers["content-security-policy"]
    assert httpx.get(world["url"] + "/ui/static/vendor/cytoscape.LICENSE").status_code == 200
    filtered = api(world, "alice", "/ui/api/memories", user_id=alice, filters=json.dumps({"topic": "family"})).json()
    assert [m["memory"] for m in filtered["results"]] == ["My sister Jesica has a dog"]
    assert api(world, "alice", "/ui/api/memories", user_id=alice, filters="{not json").status_code == 400


def test_inspector_without_auth_opens_without_a_key(chrome, store, server, tmp_path):  # noqa: F811
    """A --no-auth server (tenants None): the page opens the user straight away, no key form."""
    user = f"open-{uuid.uuid4().hex[:8]}"
    memory = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "history.db"))
    load_story(store, Scope.of(user_id=user), TEST_DIMS)
    try:
        with serving(memory, None) as url:
            chrome.get(f"{url}/ui?user_id={user}")
            wait(chrome, shown)
            assert not by_id(chrome, "key-form").is_displayed()
            assert "no key needed" in by_id(chrome, "who").text
            assert "HAS_PET" in table_text(chrome, "relations")
    finally:
        store.delete_all(Scope.of(user_id=user))


def test_wheel_ships_the_inspector(wheel):  # noqa: F811 - the fixture imported from test_package
    """Every file of graphmem/ui (page, script, styles, the vendored library and its licence) is in the wheel."""
    import zipfile

    names = set(zipfile.ZipFile(wheel).namelist())
    files = [p for p in UI_DIR.rglob("*") if p.is_file()]
    assert {"index.html", "app.js", "app.css", "cytoscape.min.js", "cytoscape.LICENSE"} <= {p.name for p in files}
    for path in files:
        assert f"graphmem/ui/{path.relative_to(UI_DIR).as_posix()}" in names
