"""Exploring a scope's graph in Neo4j Browser (graphmem.browser) and exporting it (graphmem.lifecycle.export).

Unit tests need nothing; the ``neo4j_uri`` tests run on the real Neo4j; the real-browser test drives
Debian's chromium headless through Selenium against the Browser the project's launcher serves.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import uuid
import zipfile
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote, urlsplit

import networkx as nx
import pytest

from graphmem.browser import (
    STYLE_PATH,
    TYPE_LABELS,
    VIEWS,
    Target,
    bound_statement,
    browser_link,
    cypher_identifier,
    cypher_string,
    cypher_value,
    default_browser_url,
    list_queries,
    load_query,
)
from graphmem.browser.browse import browse, server_browser_url
from graphmem.cli.main import main
from graphmem.embeddings import HashingEmbedder
from graphmem.errors import (
    InvalidInputError,
    StoreUnavailableError,
)
from graphmem.lifecycle.export import read_graph, to_cypher, to_graphml, to_json
from graphmem.types import (
    EntityWrite,
    GraphWrite,
    Invalidation,
    RelationWrite,
    Scope,
    canonical_name,
    new_id,
)

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts"
HOSTILE_TEXTS = [
    'o\'brien "the" `boss`',
    "x\\u0022) DETACH DELETE n //",
    "Zoë 😀 中文 \u200b",
    "a&cmd=play&arg=x#frag+plus%20pct $x => y; //",
    "back\\slash\nnew line\ttab",
]
#: ids a scope accepts (README: Scope refuses control and format characters such as \n, \u200b)
HOSTILE_IDS = [
    'o\'brien "the" `boss`',
    "x\\u0022) DETACH DELETE n //",
    "Zoë 😀 中文 \u00a0nbsp",
    "a&cmd=play&arg=x#frag+plus%20pct $x => y; //",
    "back\\slash  two  spaces",
]
T1 = datetime(2024, 1, 10, 9, 0, tzinfo=timezone.utc)
T2 = datetime(2024, 3, 1, 9, 0, tzinfo=timezone.utc)
T3 = datetime(2024, 6, 15, 10, 0, tzinfo=timezone.utc)
LAUNCHER = Target(bolt_url="bolt://127.0.0.1:7687", browser_url="http://127.0.0.1:7474/browser/", description="test")


# --- helpers ------------------------------------------------------------------------------------


def browser_reads(url: str) -> tuple[list[str], str]:
    """What Neo4j Browser 5.24 takes from a URL: the `cmd` values (read from the raw URL) and the
    editor text (the whole URL decoded once, '+' as space, then `arg` cut at '&' or '#')."""
    cmds = re.findall(r"[?&]cmd=([^&#]*)", url)
    decoded = unquote(url.replace("+", " "), errors="strict")
    return cmds, "\n".join(re.findall(r"[?&]arg=([^&#]*)", decoded))


def scope_values(scope: Scope, **extra: str) -> dict:
    return {"user_id": scope.user_id, "agent_id": scope.agent_id, "run_id": scope.run_id, **extra}


def load_story(store, scope: Scope, dims: int) -> dict[str, str]:
    """Three adds: names and badminton (T1), the sister and her dog (T2), badminton retired (T3).
    Returns the add ids by name."""
    emb = HashingEmbedder(dims=dims)
    ids = {n: new_id() for n in ("me", "Desmond", "badminton", "sister", "Jesica", "dog")}
    types = {"me": "person", "Desmond": "person", "badminton": "activity", "sister": "person", "Jesica": "person", "dog": "pet"}
    names = {**{n: n for n in ids}, "me": scope.self_name}

    def entity(key: str, is_new: bool = True) -> EntityWrite:
        return EntityWrite(ids[key], names[key], canonical_name(names[key]), types[key], emb.embed_one(names[key]), is_new)

    adds = {"first": new_id(), "second": new_id(), "third": new_id()}
    store.write(GraphWrite(adds["first"], scope, T1, entities=[entity("me"), entity("Desmond"), entity("badminton")], relations=[
        RelationWrite(ids["me"], "HAS_NAME", ids["Desmond"], T1), RelationWrite(ids["me"], "LOVES_PLAYING", ids["badminton"], T1)]))
    store.write(GraphWrite(adds["second"], scope, T2, entities=[entity("me", False), entity("sister"), entity("Jesica"), entity("dog")], relations=[
        RelationWrite(ids["me"], "HAS_SISTER", ids["sister"], T2), RelationWrite(ids["sister"], "HAS_NAME", ids["Jesica"], T2),
        RelationWrite(ids["Jesica"], "HAS_PET", ids["dog"], T2)]))
    loves = next(r for r in store.get_all(scope) if r.relationship == "LOVES_PLAYING")
    store.write(GraphWrite(adds["third"], scope, T3, entities=[entity("me", False), entity("Desmond", False)],
                           relations=[RelationWrite(ids["me"], "HAS_NAME", ids["Desmond"], T3)],
                           invalidations=[Invalidation(loves.id, T3)]))
    return adds


def neo4j_dims(uri: str) -> int:
    """The database's entity vector size (setup() refuses another), else the session's test size."""
    from conftest import TEST_DIMS
    from neo4j import GraphDatabase

    with GraphDatabase.driver(uri, auth=None) as driver:
        rows = driver.execute_query("SHOW INDEXES YIELD name, options WHERE name = 'entity_embedding' RETURN options")[0]
    return int(rows[0]["options"]["indexConfig"]["vector.dimensions"]) if rows else TEST_DIMS


@pytest.fixture
def neo4j_store(neo4j_uri):
    from graphmem.stores.neo4j import Neo4jStore

    store = Neo4jStore(url=neo4j_uri, embedding_dims=neo4j_dims(neo4j_uri))
    store.setup()
    store.dims = store.embedding_dims
    yield store
    store.close()


@pytest.fixture
def cypher_run(neo4j_uri):
    from neo4j import GraphDatabase

    driver = GraphDatabase.driver(neo4j_uri, auth=None, notifications_min_severity="OFF")

    def run(text: str, **params) -> list[dict]:
        return [r.data() for r in driver.execute_query(text, params)[0]]

    yield run
    driver.close()


def cleanup(store, *scopes: Scope) -> None:
    for scope in scopes:
        store.delete_all(scope)


# --- literals and URLs (no server) ---------------------------------------------------------------


@pytest.mark.parametrize("text", HOSTILE_TEXTS + ["", "plain"])
@pytest.mark.parametrize("for_url", [False, True])
def test_cypher_string_never_gives_cypher_a_quote_or_backslash_to_misread(text, for_url):
    literal = cypher_string(text, for_url=for_url)
    body = literal[1:-1]
    assert literal[0] == literal[-1] == '"'
    # read left to right as Cypher does: plain characters, backslash escapes, and \uXXXX escapes that
    # never stand for a quote or a backslash (Cypher decodes those before it reads the string)
    tokens = re.findall(r'\\u[0-9a-f]{4}|\\["\'\\nrtbf]|[^"\'\\]', body)
    assert "".join(tokens) == body, literal
    assert not {t for t in tokens if t.startswith("\\u")} & {"\\u0022", "\\u0027", "\\u005c"}
    if for_url:
        assert not set(body) & set("&#+%;$=>/\n`")


def test_cypher_values_and_identifiers():
    when = datetime(2024, 6, 15, 10, 0, tzinfo=timezone.utc)
    assert cypher_value(when) == 'datetime("2024-06-15T10:00:00Z")'
    assert cypher_value([1, None, True, 1.5, "a"]) == '[1, null, true, 1.5, "a"]'
    assert cypher_identifier("HAS_`X") == "`HAS_``X`"
    with pytest.raises(InvalidInputError):
        cypher_identifier("A\\u0060")
    with pytest.raises(InvalidInputError):
        cypher_value(float("nan"))


@pytest.mark.parametrize("user_id", HOSTILE_IDS)
def test_browser_url_carries_hostile_user_ids_intact(user_id):
    scope = Scope.of(user_id=user_id)
    statement = bound_statement("user_graph", scope_values(scope))
    url = browser_link(LAUNCHER, statement)
    assert re.fullmatch(r"[A-Za-z0-9%._~:/?&=-]+", url), "everything outside the URL syntax is percent-encoded"
    cmds, editor = browser_reads(url)
    assert cmds == ["edit"]
    assert editor == statement
    query = parse_qs(urlsplit(url).query)
    assert query["dbms"] == ["bolt://127.0.0.1:7687"] and query["preselectAuthMethod"] == ["NO_AUTH"]
    assert f"WITH {cypher_string(scope.user_id, for_url=True)} AS user_id, null AS agent_id, null AS run_id" in editor


def test_browser_url_without_auth_preselection_when_the_store_has_a_user():
    target = Target(bolt_url="neo4j+s://db.example.com", browser_url=default_browser_url("neo4j+s://db.example.com"),
                    description="x", database="graphs", username="neo4j", password="secret")
    url = browser_link(target, "RETURN 1")
    assert url.startswith("https://db.example.com:7473/browser/?")
    query = parse_qs(urlsplit(url).query)
    assert "preselectAuthMethod" not in query and query["db"] == ["graphs"] and "secret" not in url
    assert default_browser_url("bolt://10.0.0.5:7687") == "http://10.0.0.5:7474/browser/"


def test_views_need_their_extra_parameters():
    scope = Scope.of(user_id="alice")
    with pytest.raises(InvalidInputError, match="entity"):
        bound_statement("entity_neighbourhood", scope_values(scope))
    with pytest.raises(InvalidInputError, match="unknown view"):
        bound_statement("copy_scope", scope_values(scope))


# --- saved queries and style (files) --------------------------------------------------------------


def test_every_browser_query_file_loads_with_a_purpose_and_parameters():
    names = list_queries()
    assert set(VIEWS) <= set(names)
    for name in names:
        query = load_query(name)
        assert query.purpose and len(query.text.splitlines()[0]) < 300, name
        assert not re.search(r"\{\s*\}|\{[a-z_]+\}|%s|%\(", query.text), name  # no Python formatting holes
    for view in VIEWS:
        query = load_query(view)
        assert query.parameters[:3] == ("user_id", "agent_id", "run_id"), view
        assert "&" not in query.text and "#" not in query.text, view  # Browser cuts URL text there
        statement = bound_statement(view, scope_values(Scope.of(user_id="u"), entity="e", relation_id="r",
                                                       **{"from": "2024-01-01T00:00:00Z", "to": "2025-01-01T00:00:00Z"}))
        assert "$" not in "\n".join(line for line in statement.splitlines() if not line.startswith("//")), view


def parse_grass_like_browser(text: str) -> dict[str, dict[str, str]]:
    """Neo4j Browser 5.24's GraSS reader (no comments; quotes dropped; 'key: value' split on ';')."""
    rules, selector, body, in_quotes, in_rule = {}, "", "", False, False
    for ch in text:
        if ch in "'\"":
            in_quotes = not in_quotes
            continue
        if ch == "{" and not in_quotes:
            in_rule = True
            continue
        if ch == "}" and not in_quotes:
            rules[selector], selector, body, in_rule = body, "", "", False
            continue
        if in_rule:
            body += ch
        elif not ch.isspace():
            selector += ch
    return {sel: {k.strip(): v.strip() for k, v in (p.split(":") for p in body.split(";") if p.count(":") == 1)}
            for sel, body in rules.items()}


def test_style_colours_every_display_label_and_captions_by_name():
    rules = parse_grass_like_browser(STYLE_PATH.read_text(encoding="utf-8"))
    assert set(rules) >= {"node", "relationship", "node.Entity", "node.Memory", "relationship.MENTIONS"}
    assert all(re.fullmatch(r"(node|relationship)(\.[A-Za-z_]+)?", s) for s in rules), "no stray text or comments"
    for label in set(TYPE_LABELS.values()):
        assert re.fullmatch(r"#[0-9A-F]{6}", rules[f"node.{label}"]["color"]), label
        assert rules[f"node.{label}"]["caption"] == "{name}"
    assert rules["relationship"]["caption"] == "<type>"
    assert rules["node.Memory"]["caption"] == "{text}" and rules["node.Memory"]["color"] != rules["node.Entity"]["color"]
    assert {"person", "place", "organization", "activity", "food", "pet", "object", "event", "concept"} <= set(TYPE_LABELS)


def test_wheel_ships_browser_queries_and_style(tmp_path):
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(ROOT)],
                   check=True)
    (wheel,) = tmp_path.glob("graphmem-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for name in list_queries():
        assert f"graphmem/cypher/browser/{name}.cypher" in names
    assert "graphmem/browser/style.grass" in names


# --- export (embedded store) ---------------------------------------------------------------------


@pytest.fixture
def embedded(tmp_path):
    from graphmem.stores.embedded import EmbeddedStore

    store = EmbeddedStore(path=tmp_path / "graph", embedding_dims=32)
    store.setup()
    store.dims = 32
    yield store
    store.close()


def embedded_config(store) -> dict:
    return {"graph_store": {"provider": "embedded", "config": {"path": str(store.path)}},
            "embedder": {"provider": "hashing", "config": {"dims": store.dims}}}


def test_json_and_graphml_exports_round_trip(embedded, tmp_path):
    scope = Scope.of(user_id='o\'brien "Zoë"')
    load_story(embedded, scope, embedded.dims)
    graph = read_graph(embedded, scope, include_invalidated=True)
    doc = json.loads(to_json(graph))
    assert doc["scope"] == {"user_id": scope.user_id, "agent_id": None, "run_id": None}
    assert {e["name"] for e in doc["entities"]} == {scope.user_id, "Desmond", "badminton", "sister", "Jesica", "dog"}
    assert sorted((r["relationship"], r["current"]) for r in doc["relations"]) == [
        ("HAS_NAME", True), ("HAS_NAME", True), ("HAS_PET", True), ("HAS_SISTER", True), ("LOVES_PLAYING", False)]
    path = tmp_path / "g.graphml"
    path.write_text(to_graphml(graph), encoding="utf-8")
    g = nx.read_graphml(path, force_multigraph=True)
    assert g.is_directed() and g.number_of_nodes() == 6 and g.number_of_edges() == 5
    names = {n: d["label"] for n, d in g.nodes(data=True)}
    assert set(names.values()) == {e["name"] for e in doc["entities"]}
    loves = [d for _, _, d in g.edges(data=True) if d["label"] == "LOVES_PLAYING"]
    assert loves[0]["current"] is False and loves[0]["invalid_at"] == "2024-06-15T10:00:00Z"
    assert g.graph["user_id"] == scope.user_id


def test_cli_export_writes_the_file_and_reports(embedded, tmp_path, capsys):
    scope = Scope.of(user_id="carol")
    load_story(embedded, scope, embedded.dims)
    config = tmp_path / "c.json"
    config.write_text(json.dumps(embedded_config(embedded)))
    embedded.close()  # one open store per folder: the command opens it itself
    out = tmp_path / "carol.json"
    assert main(["export", "--user", "carol", "--format", "json", "--output", str(out), "--config", str(config)]) == 0
    assert len(json.loads(out.read_text())["relations"]) == 4  # current only by default
    assert "exported 6 entities, 4 relations and 0 memories of user_id='carol'" in capsys.readouterr().err
    assert main(["export", "--user", "nobody", "--format", "graphml", "--config", str(config)]) == 1
    assert "user_id='nobody' has no graph in the embedded store" in capsys.readouterr().err


def test_browse_on_a_user_without_data_says_so(embedded, tmp_path, capsys):
    config = tmp_path / "c.json"
    config.write_text(json.dumps(embedded_config(embedded)))
    load_story(embedded, Scope.of(user_id="someone"), embedded.dims)
    embedded.close()
    assert main(["browse", "--user", "nobody", "--config", str(config)]) == 1
    captured = capsys.readouterr()
    assert "user_id='nobody' has no graph in the embedded store" in captured.err
    assert "Add memories first" in captured.err and captured.out == ""


def test_browse_names_an_unreachable_neo4j(tmp_path, capsys):
    config = tmp_path / "c.json"
    config.write_text(json.dumps({"graph_store": {"provider": "neo4j", "config": {"url": "bolt://127.0.0.1:9"}}}))
    assert main(["browse", "--user", "alice", "--config", str(config)]) == 1
    assert "Neo4j is unreachable at bolt://127.0.0.1:9" in capsys.readouterr().err
    with pytest.raises(StoreUnavailableError, match="bolt://127.0.0.1:9"):
        browse({"graph_store": {"provider": "neo4j", "config": {"url": "bolt://127.0.0.1:9"}}}, Scope.of(user_id="a"),
               out=lambda line: None)


# --- on the real Neo4j ---------------------------------------------------------------------------


def test_saved_views_return_the_expected_rows(neo4j_store, cypher_run):
    scope = Scope.of(user_id=f"views-{uuid.uuid4().hex[:8]}")
    other = Scope.of(user_id=scope.user_id + "-other", run_id="r1")  # another user's scope: never shown
    try:
        adds = load_story(neo4j_store, scope, neo4j_store.dims)
        load_story(neo4j_store, other, neo4j_store.dims)
        rels = {r.relationship + ":" + r.destination: r for r in neo4j_store.get_all(scope, include_invalidated=True)}
        desmond = rels["HAS_NAME:Desmond"]
        cypher_run("CREATE (:Message {scope: $scope, seq: 1, add_id: $add, role: 'user', content: 'Hi, my name is Desmond.', timestamp: $t})",
                   scope=scope.key, add=adds["first"], t=T1)
        cypher_run("MATCH (e:Entity {id: $id}) CREATE (:Memory {id: $m1, text: 'Name is Desmond', user_id: $u, created_at: $t})-[:MENTIONS]->(e) "
                   "CREATE (:Memory {id: $m2, text: 'old fact', user_id: $u, created_at: $t, deleted_at: $t})-[:MENTIONS]->(e)",
                   id=desmond.destination_id, m1=new_id(), m2=new_id(), u=scope.user_id, t=T1)
        params = scope_values(scope)

        def view(name: str, **extra) -> list[dict]:
            return cypher_run(load_query(name).text, **params, **extra)

        current = view("user_graph")
        pairs = {(r["e"]["name"], r["d"]["name"]) for r in current}
        assert pairs == {(scope.user_id, "Desmond"), (scope.user_id, "sister"), ("sister", "Jesica"), ("Jesica", "dog")}
        # badminton's only relation was retired: the node is not shown, so Browser's "connect result
        # nodes" has no end to draw the retired LOVES_PLAYING arrow to
        shown = {r["e"]["name"] for r in current} | {r["d"]["name"] for r in current}
        assert shown == {scope.user_id, "Desmond", "sister", "Jesica", "dog"}
        ids = [r["e"]["id"] for r in current] + [r["d"]["id"] for r in current]
        connected = cypher_run("MATCH (a:Entity)-[r]->(b:Entity) WHERE a.id IN $ids AND b.id IN $ids RETURN type(r) AS t", ids=ids)
        assert sorted(c["t"] for c in connected) == ["HAS_NAME", "HAS_NAME", "HAS_PET", "HAS_SISTER"]  # what Browser adds

        around = view("entity_neighbourhood", entity="JESICA")
        assert {r["n"]["name"] for r in around} == {"sister", "dog"}

        history = view("history")
        assert [(h["status"], h["relationship"]) for h in history if h["relationship"] == "LOVES_PLAYING"] == [("invalidated", "LOVES_PLAYING")]
        loves = next(h for h in history if h["relationship"] == "LOVES_PLAYING")
        assert loves["valid_from"].to_native() == T1 and loves["valid_until"].to_native() == T3 and loves["retired_at"].to_native() == T3
        assert sum(h["status"] == "current" for h in history) == 4

        early = view("changes", **{"from": "2024-01-01", "to": "2024-04-01"})
        assert [c["change"] for c in early] == ["learned"] * 5
        late = view("changes", **{"from": "2024-05-01", "to": "2024-07-01"})
        assert [(c["change"], c["relationship"]) for c in late] == [("retired", "LOVES_PLAYING")]

        prov = view("provenance", relation_id=desmond.id)
        assert [p["add_id"] for p in prov] == [adds["first"], adds["third"]]
        assert prov[0]["message"] == "Hi, my name is Desmond." and prov[0]["role"] == "user" and prov[1]["message"] is None

        memories = view("entity_memories", entity="desmond")
        assert [m["m"]["text"] for m in memories] == ["Name is Desmond"]
    finally:
        cypher_run("MATCH (m:Message {add_id: $add}) DELETE m", add=adds["first"])
        cypher_run("MATCH (m:Memory {user_id: $u}) DETACH DELETE m", u=scope.user_id)
        cleanup(neo4j_store, scope, other)


@pytest.mark.parametrize("user_id", HOSTILE_IDS)
def test_the_url_statement_runs_for_hostile_user_ids(user_id, neo4j_store, cypher_run):
    scope = Scope.of(user_id=f"{user_id}-{uuid.uuid4().hex[:6]}")
    try:
        load_story(neo4j_store, scope, neo4j_store.dims)
        _, editor = browser_reads(browser_link(LAUNCHER, bound_statement("user_graph", scope_values(scope))))
        rows = cypher_run(editor)  # exactly what Browser's editor holds, with no parameters
        shown = {r["e"]["name"] for r in rows} | {r["d"]["name"] for r in rows}
        assert shown == {scope.user_id, "Desmond", "sister", "Jesica", "dog"}
    finally:
        cleanup(neo4j_store, scope)


def test_cypher_export_loads_into_another_scope_identically(neo4j_store, cypher_run):
    scope = Scope.of(user_id=f'src "{uuid.uuid4().hex[:6]}" `x` \\u0022 😀')
    target = Scope.of(user_id=f"copy-{uuid.uuid4().hex[:8]}", run_id="imported")
    try:
        load_story(neo4j_store, scope, neo4j_store.dims)
        graph = read_graph(neo4j_store, scope, include_invalidated=True)
        script = to_cypher(graph, target)
        statements = [s for s in re.split(r";\n", script) if s.strip() and not s.lstrip().startswith("//")]
        for statement in statements:
            cypher_run("\n".join(line for line in statement.splitlines() if not line.startswith("//")))
        copied = read_graph(neo4j_store, target, include_invalidated=True)

        def own(name, g):  # the scope's own node is renamed to the target's user (issue 22); other names are copied
            return "<me>" if name in (g.scope.user_id, canonical_name(g.scope.user_id)) else name

        def shape(g):
            return sorted((own(r.source, g), r.relationship, own(r.destination, g), r.valid_at, r.invalid_at, r.created_at,
                           r.expired_at, r.mentions, tuple(r.provenance)) for r in g.relations)

        assert len(copied.relations) == 5 and shape(copied) == shape(graph)
        assert sorted((own(e.name, copied), own(e.canonical, copied), e.entity_type, e.mentions, e.created_at) for e in copied.entities) == \
            sorted((own(e.name, graph), own(e.canonical, graph), e.entity_type, e.mentions, e.created_at) for e in graph.entities)
        assert not {e.id for e in copied.entities} & {e.id for e in graph.entities}
        labels = cypher_run("MATCH (e:Entity {name: 'dog'}) WHERE e.scope = $s RETURN labels(e) AS l", s=target.key)
        assert sorted(labels[0]["l"]) == ["Entity", "Pet"]
    finally:
        cleanup(neo4j_store, scope, target)


def test_browse_configured_neo4j_labels_types_and_prints_the_view(neo4j_store, neo4j_uri, cypher_run):
    scope = Scope.of(user_id=f"browse-{uuid.uuid4().hex[:8]}")
    lines: list[str] = []
    try:
        load_story(neo4j_store, scope, neo4j_store.dims)
        config = {"graph_store": {"provider": "neo4j", "config": {"url": neo4j_uri}}}
        result = browse(config, scope, "entity_neighbourhood", {"entity": "Jesica"}, out=lines.append)
        assert result.entities == 6 and result.current == 4 and result.relations == 5
        assert lines[0] == f"Neo4j: the configured Neo4j store at {neo4j_uri}"
        _, editor = browser_reads(result.url)
        assert {r["e"]["name"] for r in cypher_run(editor)} == {"Jesica"}
        labels = {r["name"]: sorted(r["l"]) for r in cypher_run("MATCH (e:Entity) WHERE e.scope = $s RETURN e.name AS name, labels(e) AS l", s=scope.key)}
        assert labels["dog"] == ["Entity", "Pet"] and labels["badminton"] == ["Activity", "Entity"]
        # the scope's own node is captioned with the user's name (its current HAS_NAME), via node.Self
        own = cypher_run("MATCH (e:Entity:Self) WHERE e.scope = $s RETURN e.name AS name, e.display_name AS caption", s=scope.key)
        assert own == [{"name": scope.user_id, "caption": "Desmond (me)"}]
        # Browser's address comes from the server's own settings, not an assumed 7474
        settings = {r["name"]: r["value"] for r in cypher_run(load_query("browser_address").text)}
        assert result.target.browser_url == server_browser_url(neo4j_uri, settings)
        assert urlsplit(result.url).port == int(settings["server.http.advertised_address"].rpartition(":")[2])
    finally:
        cleanup(neo4j_store, scope)


class _LauncherStandIn:
    """The project's launcher as browse sees it, pointing at the test Neo4j."""

    def __init__(self, uri: str) -> None:
        self.uri, self.browser_url = uri, default_browser_url(uri)

    def start(self) -> str:
        return self.uri


def test_server_browser_url_follows_the_servers_settings():
    on = {"server.http.enabled": "true", "server.http.advertised_address": "0.0.0.0:7412",
          "server.https.enabled": "true", "server.https.advertised_address": "db.internal:7493"}
    assert server_browser_url("bolt://example.org:7612", on) == "http://example.org:7412/browser/"
    assert server_browser_url("neo4j+s://example.org", on) == "https://example.org:7493/browser/"
    assert server_browser_url("bolt://[::1]:7687", {**on, "server.http.enabled": "false"}) == "https://[::1]:7493/browser/"
    assert server_browser_url("bolt://h", {"server.http.enabled": "false"}) is None


def test_demo_browse_hint_names_the_config_it_needs(tmp_path):
    from graphmem.cli.demo import U, browse_hint

    store = {"provider": "neo4j", "config": {"url": "bolt://127.0.0.1:7612"}}
    assert f"graphmem browse --user {U} --config {tmp_path / 'c.json'}" in browse_hint(store, tmp_path / "c.json")
    hint = browse_hint(store, None)
    written = json.loads(hint.split("echo '")[1].split("' >")[0])
    assert written == {"graph_store": store} and f"graphmem browse --user {U} --config demo-neo4j.json" in hint


# --- in a real browser ----------------------------------------------------------------------------

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
CHROME_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync", "--disable-quic", "--window-size=1400,1000")


@pytest.fixture
def chrome(tmp_path, monkeypatch):
    if not (CHROMIUM and CHROMEDRIVER):
        if IN_CI:
            pytest.fail("CI must run the real-browser test: install chromium and chromium-driver (see .ci/run)")
        pytest.skip("chromium and chromedriver not installed (apt-get install chromium chromium-driver); CI runs this test")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        if IN_CI:
            pytest.fail("selenium missing: install the dev extra (pip install -e '.[dev]')")
        pytest.skip("selenium not installed (pip install -e '.[dev]')")
    monkeypatch.setenv("SE_OFFLINE", "true")  # Selenium Manager must not fetch anything
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROME_FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={tmp_path / 'chromium-profile'}")
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def _run_in_browser(driver, url: str, wait_for: str, persisted: str | None = None, timeout: float = 60) -> None:
    """Open a Browser URL (the editor pre-filled), wait until connected, press Run, wait for ``wait_for``
    in the new frame and, when given, for the JS expression ``persisted`` (Browser saves settings late)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(url)
    wait = WebDriverWait(driver, timeout)
    wait.until(lambda d: "Connected to Neo4j" in d.find_element(By.TAG_NAME, "body").text)
    before = len(driver.find_elements(By.CSS_SELECTOR, '[data-testid="frame"]'))
    wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, '[data-testid="editor-Run"]'))).click()
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, '[data-testid="frame"]')) > before)
    wait.until(lambda d: wait_for in d.find_elements(By.CSS_SELECTOR, '[data-testid="frame"]')[0].text)
    if persisted:
        wait.until(lambda d: d.execute_script(f"try {{ return Boolean({persisted}); }} catch (e) {{ return false; }}"))


def test_real_browser_shows_the_users_graph(chrome, neo4j_store, neo4j_uri, tmp_path):
    """The demo story through graphmem into Neo4j, then the URL `graphmem browse` prints, in chromium."""
    import threading
    import urllib.request
    from functools import partial
    from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

    from helpers import llm_config
    from neo4j import GraphDatabase
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    from graphmem import Memory
    from graphmem.cli.demo import STORIES, story_handler
    from graphmem.testing import ScriptedLLMServer

    with GraphDatabase.driver(neo4j_uri) as driver:
        settings = {r["name"]: r["value"] for r in driver.execute_query(load_query("browser_address").text).records}
    browser_url = server_browser_url(neo4j_uri, settings) or default_browser_url(neo4j_uri)
    try:
        urllib.request.urlopen(browser_url, timeout=5).close()
    except OSError as exc:
        pytest.skip(f"no Neo4j Browser at {browser_url} (GRAPHMEM_NEO4J_URI names a server without one): {exc}")

    user = f"Zoë \"the\" `tester` {uuid.uuid4().hex[:6]}"
    scope = Scope.of(user_id=user)

    class GrassFiles(SimpleHTTPRequestHandler):  # Browser fetches `:style <url>` cross-origin
        def end_headers(self) -> None:
            self.send_header("Access-Control-Allow-Origin", "*")
            self.send_header("Access-Control-Allow-Headers", "*")
            super().end_headers()

        def do_OPTIONS(self) -> None:
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    style_server = ThreadingHTTPServer(("127.0.0.1", 0), partial(GrassFiles, directory=str(STYLE_PATH.parent)))
    threading.Thread(target=style_server.serve_forever, daemon=True).start()
    try:
        with ScriptedLLMServer() as llm:
            stories = STORIES  # the demo's scripted answers say "I": they fit any user id
            llm.set_handler(story_handler(stories))
            config = {"llm": llm_config(llm), "history_db_path": str(tmp_path / "history.db")}
            from graphmem.stores.neo4j import Neo4jStore

            writer = Neo4jStore(url=neo4j_uri, embedding_dims=neo4j_store.dims)  # Memory closes its store
            with Memory(config, store=writer, embedder=HashingEmbedder(dims=neo4j_store.dims)) as memory:
                for story in stories.values():
                    for text, _ in story:
                        memory.add(text, user_id=user)
        current = [r for r in neo4j_store.get_all(scope)]
        names = {r.source for r in current} | {r.destination for r in current}
        assert {"Desmond", "Jesica", "dog"} <= names
        retired = {r.relationship for r in neo4j_store.get_all(scope, include_invalidated=True) if not r.is_current}
        assert retired == {"LOVES_PLAYING"}

        result = browse({"graph_store": {"provider": "neo4j", "config": {"url": neo4j_uri}}}, scope, out=lambda line: None)

        # once per web browser, as the README says: the style. Browser keeps its default settings
        # ("connect result nodes" on): the view alone must keep the retired relation out.
        assert result.url.startswith(browser_url)
        setup = browser_link(Target(bolt_url=neo4j_uri, browser_url=browser_url, description=""), "")
        style_url = f"http://localhost:{style_server.server_address[1]}/{STYLE_PATH.name}"
        _run_in_browser(chrome, setup + quote(f":style {style_url}", safe=""), "node.Person",
                        "JSON.parse(localStorage['neo4j.grass'])['node.Person'].color === '#4C8EDA'")

        _run_in_browser(chrome, result.url, "Displaying")
        others = names - {user}  # the user's own node is captioned "Desmond (me)", checked below
        try:
            WebDriverWait(chrome, 30).until(lambda d: others <= {t.text for t in d.find_elements(By.CSS_SELECTOR, "svg text")})
        finally:
            ARTIFACTS.mkdir(parents=True, exist_ok=True)
            chrome.save_screenshot(str(ARTIFACTS / "browser-graph.png"))
        shown = {t.text for t in chrome.find_elements(By.CSS_SELECTOR, "svg text")}
        assert {"HAS_NAME", "HAS_SISTER", "HAS_PET"} <= shown
        assert "LOVES_PLAYING" not in shown and "badminton" not in shown  # retired: not part of the current graph
        fills = chrome.execute_script(  # each node is a <g> holding its outline circle and caption
            "return Array.from(document.querySelectorAll('svg circle.b-outline'))"
            ".map(c => [c.parentNode.textContent.trim(), c.getAttribute('fill')])")
        colours = {text: fill for text, fill in fills}
        assert user in names and "Desmond(me)" in {t.replace(" ", "") for t in colours}  # own node: the user's name
        assert colours["Jesica"].upper() == "#4C8EDA" and colours["dog"].upper() == "#DA7194"  # Person, Pet
    finally:
        style_server.shutdown()
        cleanup(neo4j_store, scope)
