"""Display copies never mix with a store's data (issue 45, item 2). ``graphmem browse`` on an
embedded config copied the scope's graph into the Neo4j on the default ports, where a Neo4j store's
``get_all`` and ``search`` then returned the copy as the user's own data. Now: browse copies into a
launcher server of its own (other default ports), refuses a database holding a store's data, and
writes copies under a scope no store reads. On the real Neo4j: the suite's server (which holds
store data) for the refusal and the store's reads, a launcher server of the test's own for a copy
made and then refused once a store has set up there."""

from __future__ import annotations

import socket
import uuid

import pytest
from conftest import ROOT, TEST_DIMS
from helpers import make_memory
from test_browser import _LauncherStandIn, embedded_config, load_story, neo4j_dims

from graphmem.browser.browse import DISPLAY_PORTS, _Connection, browse, launcher_target
from graphmem.browser.copies import COPY_PREFIX, copy_into, copy_key
from graphmem.config import MemoryConfig, Neo4jSettings
from graphmem.errors import StoreError
from graphmem.lifecycle.export import open_reader, read_graph
from graphmem.testing import ScriptedLLMServer
from graphmem.types import Scope


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def cypher_run(neo4j_uri):
    from neo4j import GraphDatabase

    with GraphDatabase.driver(neo4j_uri, auth=None, notifications_min_severity="OFF") as driver:
        yield lambda text, **params: [r.data() for r in driver.execute_query(text, params)[0]]


@pytest.fixture
def story(tmp_path):
    """An embedded store holding the browser story for a fresh user, closed; its config."""
    from graphmem.stores.embedded import EmbeddedStore

    scope = Scope.of(user_id=f"alice-{uuid.uuid4().hex[:8]}")
    store = EmbeddedStore(path=tmp_path / "graph", embedding_dims=32)
    store.setup()
    store.dims = 32
    load_story(store, scope, 32)
    store.close()
    return scope, embedded_config(store)


def test_display_copies_get_ports_of_their_own():
    from graphmem.cli.main import build_parser
    from graphmem.launcher import Neo4jLauncher

    ns = build_parser("browse").parse_args(["browse", "--user", "alice"])
    assert (ns.bolt_port, ns.http_port) == DISPLAY_PORTS  # the CLI's defaults are browse's
    store_port = int(Neo4jSettings().url.rsplit(":", 1)[1])
    launcher = Neo4jLauncher()
    assert DISPLAY_PORTS[0] not in (store_port, launcher.bolt_port) and DISPLAY_PORTS[1] != launcher.http_port


def test_browse_refuses_to_copy_into_a_database_holding_store_data(story, neo4j_uri, cypher_run):
    """The suite's Neo4j holds data of graphmem's Neo4j store (other tests' scopes): no copy goes there."""
    scope, config = story
    from graphmem.stores.neo4j import Neo4jStore

    with Neo4jStore(url=neo4j_uri, embedding_dims=neo4j_dims(neo4j_uri)) as store:
        store.setup()  # set up here: the database holds a store's schema record at least
    lines: list[str] = []
    with pytest.raises(StoreError, match="holds data of a graphmem Neo4j store"):
        browse(config, scope, launcher=_LauncherStandIn(neo4j_uri), out=lines.append)
    assert cypher_run("MATCH (e:Entity) WHERE e.user_id = $u RETURN count(e) AS n", u=scope.user_id) == [{"n": 0}]


def test_a_stores_reads_never_return_a_display_copy(story, neo4j_uri, cypher_run):
    """A copy written beside a store's data (as a database a store later moved into would hold):
    the store's get_all, search and graph reads of the same user show only the store's own data."""
    scope, config = story
    from graphmem.stores.neo4j import Neo4jStore

    with open_reader(MemoryConfig.load(config)) as source:
        graph = read_graph(source, scope, include_invalidated=True)
    store = Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS)
    store.setup()
    connection = _Connection(launcher_target(_LauncherStandIn(neo4j_uri)))
    with ScriptedLLMServer() as server, make_memory(server, store, TEST_DIMS) as memory:  # closes the store
        try:
            memory.add([{"role": "user", "content": "my sister Jesica has a dog called Rex"}], user_id=scope.user_id,
                       infer=False)
            own = memory.get_all(user_id=scope.user_id)
            assert copy_into(connection, graph, None)[:2] == (6, 5)
            assert cypher_run("MATCH (e:Entity) WHERE e.scope = $k RETURN count(e) AS n", k=copy_key(scope)) == [{"n": 6}]
            assert memory.get_all(user_id=scope.user_id) == own and own["relations"] == []
            found = memory.search("Jesica dog badminton Desmond", user_id=scope.user_id)
            assert found["relations"] == [] and {m["id"] for m in found["results"]} <= {m["id"] for m in own["results"]}
            read = read_graph(store, scope, include_invalidated=True)
            assert read.entities == [] and read.relations == []  # only the store's own memory
            assert store.relations_around(scope, [e.id for e in graph.entities]) == []
        finally:
            cypher_run("MATCH (e:Entity) WHERE e.scope = $k DETACH DELETE e", k=copy_key(scope))
            connection.close()
            memory.delete_all(user_id=scope.user_id)


@pytest.mark.neo4j
def test_browse_copies_into_its_own_server_and_refuses_it_once_a_store_moved_in(story, tmp_path, monkeypatch):
    """A launcher server of the test's own, as browse starts one: the copy is made (and replaced by
    a second browse), a Neo4j store opened there reads none of it, and once that store has written
    there browse refuses the server."""
    from graphmem.launcher import Neo4jLauncher
    from graphmem.stores.neo4j import Neo4jStore

    scope, config = story
    monkeypatch.setenv("GRAPHMEM_NEO4J_SKIP_SELFCHECK", "1")  # ~3 s a start; the suite's server ran it
    launcher = Neo4jLauncher(root=ROOT, bolt_port=_free_port(), http_port=_free_port(), data_dir=tmp_path / "data",
                             heap="512m", pagecache="64m")
    try:
        lines: list[str] = []
        for _ in range(2):  # a second browse replaces the copy
            result = browse(config, scope, launcher=launcher, out=lines.append)
        assert "the project's Neo4j launcher" in lines[0] and "embedded store" in lines[0]
        assert (result.entities, result.relations, result.current) == (6, 5, 4)
        assert result.url.startswith(launcher.browser_url)
        with Neo4jStore(url=launcher.uri, embedding_dims=32) as store:
            store.setup()
            read = read_graph(store, scope, include_invalidated=True)
            assert read.entities == [] and read.relations == []  # the copy is no store data
            load_story(store, Scope.of(user_id="bob"), 32)  # the store's own data arrives
        with pytest.raises(StoreError, match="holds data of a graphmem Neo4j store"):
            browse(config, scope, launcher=launcher, out=lines.append)
    finally:
        launcher.stop()
    assert COPY_PREFIX and not scope.key.startswith(COPY_PREFIX)
