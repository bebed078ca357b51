"""The inspector as a newcomer meets it (issue 34), in headless Chromium against the REST app under
uvicorn: no console error (a favicon is shipped), a link with ``as_of`` opens the Graph tab, the
slider shows readable times, a legend gives each entity type its own colour, "1 memory"."""

from __future__ import annotations

import re

from test_browser import chrome  # noqa: F401 - a fixture
from test_inspector import by_id, serving, wait
from test_newcomer_truths import _the_move

from graphmem.testing import FakeModel


def test_inspector_first_look(chrome, tmp_path):  # noqa: F811 - the fixture imported above
    with FakeModel() as fake:
        fake.when("My sister works at Acme", facts=["Sister works at Acme"], entities=[("I", "person"), ("sister", "person"),
                  ("Acme", "company")], relations=[("I", "has_sister", "sister"), ("sister", "works_at", "Acme")])
        memory, _ = _the_move(fake, tmp_path)
        with memory, serving(memory, None) as url:
            chrome.get(f"{url}/ui?user_id=alice&as_of=2023-12-01")
            wait(chrome, lambda d: d.execute_script("return document.body.dataset.ready") == "1")
            assert by_id(chrome, "tab-graph").get_attribute("aria-selected") == "true"
            assert not by_id(chrome, "panel-graph").get_attribute("hidden")
            assert by_id(chrome, "graph-caption").text.startswith("3 entities, 1 relation as of 2023-12-01")
            assert by_id(chrome, "memories-caption").get_attribute("textContent") == "1 memory"

            chrome.execute_script("const s = document.getElementById('as-of-slider'); s.value = '500';"
                                  "s.dispatchEvent(new Event('input')); s.dispatchEvent(new Event('change'));")
            wait(chrome, lambda d: by_id(d, "as-of-label").text not in ("2023-12-01", "now"))
            label = by_id(chrome, "as-of-label").text
            assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", label), label
            assert "." not in by_id(chrome, "graph-caption").text.split(" as of ")[1]
            assert re.search(r"as_of=\d{4}-\d\d-\d\dT\d\d(%3A|:)\d\d(%3A|:)\d\dZ", chrome.current_url), chrome.current_url

            memory.add("My sister works at Acme", user_id="alice")
            chrome.get(f"{url}/ui?user_id=alice")
            wait(chrome, lambda d: d.execute_script("return document.body.dataset.ready") == "1")
            assert by_id(chrome, "tab-memories").get_attribute("aria-selected") == "true"
            by_id(chrome, "tab-graph").click()
            wait(chrome, lambda d: by_id(d, "legend").text)
            legend = chrome.execute_script("return [...document.querySelectorAll('#legend li')].map(li => "
                                           "[li.textContent, getComputedStyle(li.firstChild).backgroundColor])")
            assert sorted(t for t, _ in legend) == ["city", "company", "person"]
            assert len({c for _, c in legend}) == 3  # a colour per type
            drawn = chrome.execute_script("return window.inspectorCy.nodes().map(n => [n.data('type'), n.data('colour')])")
            assert len({c for t, c in drawn if t == "person"}) == 1 and len({c for _, c in drawn}) == 3

            severe = [e for e in chrome.get_log("browser") if e["level"] == "SEVERE"]
            assert severe == [], severe
