"""Render time of the memory inspector (/ui) in headless chromium, for users of growing size.

For each size N it writes one synthetic user straight into the store (N entities, ~1.5 N relations of
which a tenth are retired, N/2 memories), serves the REST app (with /ui) under uvicorn on 127.0.0.1,
opens ``/ui?user_id=...`` in Debian's chromium through Selenium and reads the page's own timings
(``window.inspectorTimes``, performance.now() in the page):

  open       navigation start -> memories and graph loaded, graph drawn (the Memories tab shown)
  redraw     click "Now" on the Graph tab -> relations re-marked for the new moment in the page (as a
             slider move does; no request since the page holds every relation version), drawn, painted
  fetch      the graph request of that redraw (0: none)
  draw       cytoscape build + layout of that redraw
  centre     "Centre" on another entity -> its neighbourhood drawn and painted (no fetch)
  drawn      nodes in the drawing (above 250 entities the drawing is one entity's neighbourhood)

and the payload sizes of /ui/api/graph and /ui/api/memories (bytes as sent, and gzip-compressed).
Medians over ``--runs`` page loads. A benchmark: figures are printed, not asserted.

    python -m benchmarks.scale.inspector_render [--sizes 100,1000,5000 --runs 3 --store embedded|neo4j --neo4j-url URL]
"""

from __future__ import annotations

import argparse
import gzip
import random
import shutil
import socket
import statistics
import tempfile
import threading
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import httpx

from benchmarks.common import machine_info, table, write_result
from graphmem.embeddings import HashingEmbedder
from graphmem.types import EntityWrite, GraphWrite, MemoryWrite, RelationWrite, Scope, canonical_name, new_id

DIMS = 384
TYPES = ["person", "place", "organization", "activity", "food", "pet", "event", "object"]
RELATIONS = ["KNOWS", "LIVES_IN", "WORKS_AT", "LIKES", "VISITED", "OWNS", "PART_OF"]
BATCH = 500


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="100,1000,5000", help="entities per user, comma-separated")
    p.add_argument("--runs", type=int, default=3, help="page loads per size (median reported)")
    p.add_argument("--store", choices=("embedded", "neo4j"), default="embedded")
    p.add_argument("--neo4j-url", default="bolt://127.0.0.1:7687")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--out", help="results JSON path (default benchmarks/results/inspector_render.json)")
    return p.parse_args(argv)


def open_store(args: argparse.Namespace, folder: Path) -> Any:
    if args.store == "neo4j":
        from graphmem.stores.neo4j import Neo4jStore

        store: Any = Neo4jStore(url=args.neo4j_url, embedding_dims=DIMS)
    else:
        from graphmem.stores.embedded import EmbeddedStore

        store = EmbeddedStore(path=folder / "graph", embedding_dims=DIMS)
    store.setup()
    return store


def load_user(store: Any, scope: Scope, size: int, rng: random.Random) -> None:
    """N entities (the user's own node first), a tree of relations plus N/2 random ones (one in ten
    retired), N/2 memories, written in batches of 500 entities."""
    emb = HashingEmbedder(dims=DIMS)
    start = datetime(2023, 1, 1, tzinfo=timezone.utc)
    names = [scope.self_name] + [f"entity {i} {rng.choice(TYPES)}" for i in range(1, size)]
    ids = [new_id() for _ in names]
    edges = [(rng.randrange(0, max(1, i if i > 40 else 1)), i) for i in range(1, size)]
    edges += [(rng.randrange(size), rng.randrange(size)) for _ in range(size // 2)]
    for lo in range(0, size, BATCH):
        at = start + timedelta(days=lo // BATCH)
        entities = [EntityWrite(ids[i], names[i], canonical_name(names[i]), names[i].split()[-1] if i else "person",
                                emb.embed_one(names[i]), True) for i in range(lo, min(size, lo + BATCH))]
        relations = [_relation(ids, s, d, at, rng) for s, d in edges if s != d and lo <= max(s, d) < lo + BATCH]
        texts = [f"memory {i}: {names[i]} {rng.choice(RELATIONS).lower()} {names[rng.randrange(size)]}"
                 for i in range(lo, min(size, lo + BATCH), 2)]
        memories = [MemoryWrite("ADD", new_id(), t, emb.embed_one(t), {"n": k}, role="user") for k, t in enumerate(texts)]
        store.write(GraphWrite(new_id(), scope, at, entities=entities, relations=relations, memories=memories))


def _relation(ids: list[str], s: int, d: int, at: datetime, rng: random.Random) -> RelationWrite:
    retired = at + timedelta(days=rng.randrange(30, 300)) if rng.random() < 0.1 else None
    return RelationWrite(ids[s], rng.choice(RELATIONS), ids[d], at, retired)


def serve(store: Any, folder: Path) -> tuple[Any, threading.Thread, str]:
    import uvicorn

    from graphmem.aio import AsyncMemory
    from graphmem.memory import Memory
    from graphmem.server.rest import create_app
    memory = Memory({"llm": {"provider": "openai_compatible", "config": {"base_url": "http://127.0.0.1:9/v1", "api_key": "k"}},
                     "history_db_path": str(folder / "history.db")}, store=store, embedder=HashingEmbedder(dims=DIMS))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    server = uvicorn.Server(uvicorn.Config(create_app(AsyncMemory(memory=memory), None), host="127.0.0.1", port=port,
                                           log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    return server, thread, f"http://127.0.0.1:{port}"


def chromium(folder: Path) -> Any:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium") or shutil.which("chromium-browser") or "chromium"
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--window-size=1400,1000", f"--user-data-dir={folder / 'profile'}"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(executable_path=shutil.which("chromedriver") or "chromedriver"), options=options)


PAINTED = """const done = arguments[arguments.length - 1];
const before = document.body.dataset.graphDrawn; const t0 = performance.now();
document.getElementById(arguments[0]).click();
(function poll() {
  if (document.body.dataset.graphDrawn !== before) {
    requestAnimationFrame(() => requestAnimationFrame(() => done({ms: performance.now() - t0, times: window.inspectorTimes})));
  } else { setTimeout(poll, 5); }
})();"""


def one_load(driver: Any, url: str, user: str, other: str) -> dict[str, float]:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(f"{url}/ui?user_id={user}")
    WebDriverWait(driver, 300).until(lambda d: d.execute_script("return document.body.dataset.ready === '1'"))
    opened = driver.execute_script("return window.inspectorTimes.drawnAt")
    driver.find_element("id", "tab-graph").click()
    now = driver.execute_async_script(PAINTED, "as-of-now")
    driver.find_element("id", "focus").send_keys(other)
    centre = driver.execute_async_script(PAINTED, "focus-go")
    return {"open_ms": opened, "redraw_ms": now["ms"], "fetch_ms": now["times"]["graphFetchMs"],
            "draw_ms": now["times"]["graphRenderMs"], "centre_ms": centre["ms"], "drawn": centre["times"]["drawnNodes"]}


def payloads(url: str, user: str) -> dict[str, int]:
    out = {}
    for name, path in (("graph", "/ui/api/graph"), ("memories", "/ui/api/memories")):
        body = httpx.get(url + path, params={"user_id": user}, timeout=120).content
        out[f"{name}_bytes"], out[f"{name}_gzip_bytes"] = len(body), len(gzip.compress(body))
    return out


def measure(args: argparse.Namespace, store: Any, url: str, driver: Any, size: int) -> dict[str, Any]:
    rng = random.Random(args.seed + size)
    scope = Scope.of(user_id=f"inspector-bench-{size}-{new_id()[:8]}")
    began = time.perf_counter()
    load_user(store, scope, size, rng)
    loaded = time.perf_counter() - began
    try:
        other = f"entity {size // 2}"
        runs = [one_load(driver, url, scope.self_name, other) for _ in range(args.runs)]
        row: dict[str, Any] = {"entities": size, "load_s": round(loaded, 1), **payloads(url, scope.user_id or "")}
        for key in runs[0]:
            row[key] = round(statistics.median(r[key] for r in runs), 1)
        return row
    finally:
        store.delete_all(scope)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    folder = Path(tempfile.mkdtemp(prefix="inspector-bench-"))
    store = open_store(args, folder)
    server, thread, url = serve(store, folder)
    driver = chromium(folder)
    try:
        rows = [measure(args, store, url, driver, n) for n in sizes]
    finally:
        driver.quit()
        server.should_exit = True
        thread.join(20)
        store.close()
        shutil.rmtree(folder, ignore_errors=True)
    keys = list(rows[0])
    print(table(keys, [[r[k] for k in keys] for r in rows]))
    path = write_result("inspector_render", {"machine": machine_info(), "store": args.store, "runs": args.runs, "rows": rows},
                        args.out)
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
