"""``graphmem browse``: a Neo4j Browser URL that opens with a saved view of one scope pre-filled.

Which Neo4j: the configured Neo4j store; with the embedded store (or no config) a launcher server
of browse's own (ports DISPLAY_PORTS, not the store's default ones), into which the scope's graph
is copied for viewing: a display copy, never written beside a store's data and never read by a
store (copies.py). Before printing a URL it checks that the scope has a graph, and gives its
entities a display label per type (see style.py).

The URL uses Browser's ``cmd=edit&arg=<statement>`` (editor pre-filled), ``dbms=<bolt url>``
(connect there) and, without authentication, ``preselectAuthMethod=NO_AUTH``. Browser 5.24
decodes the whole URL once and then cuts ``arg`` at the first ``&`` or ``#``, so the statement may
hold neither: the saved views do not, and literals are written with ``for_url=True``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import quote, urlsplit

from graphmem.browser.copies import DISPLAY_PORTS, copy_into, copy_key, refuse_store_data
from graphmem.browser.queries import (
    SCOPE_PARAMETERS,
    VIEWS,
    bound_statement,
    load_query,
)
from graphmem.browser.style import labels_for, write_style
from graphmem.config import MemoryConfig, Neo4jSettings
from graphmem.errors import (
    GraphMemError,
    InvalidInputError,
    LauncherError,
    NotFoundError,
    StoreError,
    StoreUnavailableError,
)
from graphmem.lifecycle.export import open_reader, read_graph
from graphmem.schema.counts import counted
from graphmem.schema.labels import TYPE_LABELS
from graphmem.types import Scope, iso, parse_time

Out = Callable[[str], None]
#: What a CLI flag gives for a view parameter other than the scope ids.
FLAGS = {"entity": "--entity", "from": "--from", "to": "--to", "relation_id": "--relation"}
_SECURE_SCHEMES = ("+s", "+ssc")


@dataclass(frozen=True)
class Target:
    """The Neo4j that Browser will connect to."""

    bolt_url: str  # without credentials: it goes into the URL
    browser_url: str  # Neo4j Browser's address, ending in /browser/
    description: str
    database: str | None = None
    username: str | None = None
    password: str | None = None

    @property
    def no_auth(self) -> bool:
        return self.username is None


@dataclass(frozen=True)
class BrowseResult:
    url: str
    target: Target
    entities: int
    relations: int
    current: int


def browser_link(target: Target, statement: str) -> str:
    """Browser's URL with ``statement`` in the editor (Browser connects to ``target`` by itself)."""
    if "&" in statement or "#" in statement:
        raise InvalidInputError("a Browser URL statement may not contain '&' or '#' (Browser cuts the editor text there)")
    params = [("dbms", target.bolt_url)]
    if target.database:
        params.append(("db", target.database))
    if target.no_auth:
        params.append(("preselectAuthMethod", "NO_AUTH"))
    params += [("cmd", "edit"), ("arg", statement)]
    return target.browser_url + "?" + "&".join(f"{key}={quote(value, safe='')}" for key, value in params)


def server_browser_url(bolt_url: str, settings: dict[str, str]) -> str | None:
    """Browser's address from the server's own HTTP(S) settings (browser_address.cypher): the bolt
    URL's host (what this machine reaches the server by) with the advertised HTTP port, HTTPS for
    encrypted schemes or when only HTTPS is on. None when the server serves neither."""
    parts = urlsplit(bolt_url)
    host = parts.hostname or "127.0.0.1"
    host = f"[{host}]" if ":" in host else host
    schemes = ["https", "http"] if parts.scheme.endswith(_SECURE_SCHEMES) else ["http", "https"]
    for scheme in schemes:
        if settings.get(f"server.{scheme}.enabled", "").lower() != "true":
            continue
        port = settings.get(f"server.{scheme}.advertised_address", "").rpartition(":")[2]
        if port.isdigit():
            return f"{scheme}://{host}:{port}/browser/"
    return None


def default_browser_url(bolt_url: str) -> str:
    """Where a Neo4j server serves Browser by default: HTTP 7474, or HTTPS 7473 for encrypted schemes."""
    parts = urlsplit(bolt_url)
    host = parts.hostname or "127.0.0.1"
    host = f"[{host}]" if ":" in host else host
    if parts.scheme.endswith(_SECURE_SCHEMES):
        return f"https://{host}:7473/browser/"
    return f"http://{host}:7474/browser/"


# --- running browse's own statements ------------------------------------------------------------


class _Connection:
    """A driver for browse's few statements (cypher/browser), with errors translated at this edge."""

    def __init__(self, target: Target) -> None:
        from neo4j import GraphDatabase, basic_auth

        self.target = target
        auth = None if target.no_auth else basic_auth(target.username or "", target.password or "")
        with self._translated():
            self._driver = GraphDatabase.driver(target.bolt_url, auth=auth, connection_timeout=5.0,
                                                max_transaction_retry_time=2.0, user_agent="graphmem-browse",
                                                notifications_min_severity="OFF")
            self._driver.verify_connectivity()

    @contextmanager
    def _translated(self) -> Iterator[None]:
        from neo4j.exceptions import (
            AuthError,
            DriverError,
            Neo4jError,
            ServiceUnavailable,
            SessionExpired,
        )

        try:
            yield
        except (ServiceUnavailable, SessionExpired, OSError) as exc:
            raise StoreUnavailableError(f"Neo4j is unreachable at {self.target.bolt_url}: {_short(exc)}") from exc
        except AuthError as exc:
            raise StoreUnavailableError(f"Neo4j at {self.target.bolt_url} refused the credentials: {_short(exc)}") from exc
        except (Neo4jError, DriverError, ValueError) as exc:
            raise StoreError(f"Neo4j at {self.target.bolt_url}: {_short(exc)}") from exc

    def run(self, name: str, params: dict[str, Any], *, write: bool = False) -> list[dict[str, Any]]:
        from neo4j import RoutingControl

        with self._translated():
            records, _, _ = self._driver.execute_query(
                load_query(name).text, params, database_=self.target.database,
                routing_=RoutingControl.WRITE if write else RoutingControl.READ)
        return [record.data() for record in records]

    def browser_url(self) -> str | None:
        """Where the server says it serves Browser; None when it will not say (e.g. no privilege)."""
        try:
            rows = self.run("browser_address", {})
        except StoreError:
            return None
        return server_browser_url(self.target.bolt_url, {r["name"]: str(r["value"]) for r in rows})

    def close(self) -> None:
        self._driver.close()


def _short(exc: BaseException) -> str:
    text = " ".join(str(getattr(exc, "message", None) or exc or type(exc).__name__).split())
    return text if len(text) <= 300 else text[:297] + "..."


# --- where Browser connects ---------------------------------------------------------------------


def configured_target(settings: Neo4jSettings, browser_url: str | None = None) -> Target:
    from graphmem.stores.neo4j.store import redact_url

    bolt = redact_url(settings.url)
    return Target(bolt_url=bolt, browser_url=browser_url or default_browser_url(bolt),
                  description=f"the configured Neo4j store at {bolt}", database=settings.database,
                  username=settings.username,
                  password=settings.password.get_secret_value() if settings.password else None)


def launcher_target(launcher: Any = None, browser_url: str | None = None, why: str = "",
                    ports: tuple[int, int] | None = None) -> Target:
    """The project's Neo4j launcher (on ``ports``, bolt and HTTP, default DISPLAY_PORTS), started when
    it is not running (Browser there needs no login)."""
    try:
        if launcher is None:
            from graphmem.launcher import Neo4jLauncher

            bolt, http = ports or DISPLAY_PORTS
            launcher = Neo4jLauncher(bolt_port=bolt, http_port=http)
        uri = launcher.start()
    except LauncherError as exc:
        raise LauncherError(f"{exc} (graphmem browse takes other ports: --bolt-port B --http-port H)") from exc
    except GraphMemError:
        raise
    except Exception as exc:
        raise StoreUnavailableError(
            f"no Neo4j to browse in: the project's Neo4j launcher did not start ({_short(exc)}). "
            "Configure a neo4j graph_store, or give the launcher free ports: graphmem browse --bolt-port B --http-port H "
            "(the same as python -m graphmem.launcher start --bolt-port B --http-port H)") from exc
    return Target(bolt_url=uri, browser_url=browser_url or launcher.browser_url,
                  description=f"the project's Neo4j launcher at {uri}{why}")


# --- browse -------------------------------------------------------------------------------------


def browse(config: dict[str, Any] | MemoryConfig | None, scope: Scope, view: str = "user_graph",
           extra: dict[str, Any] | None = None, *, launcher: Any = None, browser_url: str | None = None,
           out: Out | None = None, ports: tuple[int, int] | None = None) -> BrowseResult:
    """Make sure a Neo4j holds the scope's graph, and return the Browser URL for ``view``; ``ports``:
    the launcher's bolt and HTTP ports when the config's store is the embedded one."""
    out = out or _note
    cfg = config if isinstance(config, MemoryConfig) else MemoryConfig.load(config)
    values = _view_values(view, scope, extra or {})
    settings = cfg.graph_store.settings()
    copy = None
    if isinstance(settings, Neo4jSettings):
        target = configured_target(settings, browser_url)
    else:
        with open_reader(cfg) as source:
            where = f"the embedded store at {settings.path.expanduser()}"
            copy = read_graph(source, scope, include_invalidated=True)
        if not copy.entities:
            raise _no_graph(scope, where, len(copy.memories))
        target = launcher_target(launcher, browser_url, f" (the config uses {where}; the scope's graph is copied there)", ports)
    out(f"Neo4j: {target.description}")
    connection = _Connection(target)
    key = scope.key if copy is None else copy_key(scope)
    try:
        if browser_url is None:
            target = _with_server_browser_url(connection, target, out)
        if copy is not None:
            _copy(connection, copy, out, cfg.graph_store.ontology)
        summary = connection.run("scope_summary", {"scope": key})[0]
        if not summary["entities"]:
            raise _no_graph(scope, target.description, None if copy is None else len(copy.memories))
        _label_types(connection, key, out, labels_for(cfg.graph_store.ontology))
        _caption_self(connection, scope, key, out)
    finally:
        connection.close()
    url = browser_link(target, bound_statement(view, values))
    out(f"{_named(scope)}: {counted(summary['entities'], 'entity')}, {counted(summary['current'], 'current relation')} "
        f"({summary['relations']} with invalidated ones)")
    out(f"view: {view}: {load_query(view).purpose}")
    return BrowseResult(url, target, summary["entities"], summary["relations"], summary["current"])


def _no_graph(scope: Scope, where: str, memories: int | None) -> NotFoundError:
    """Nothing to draw: a scope without memories is told to add some; one with memories (stored
    verbatim, or facts naming no entity) is told where a graph comes from. None: not counted."""
    if memories == 0:
        return NotFoundError(f"{_named(scope)} has no graph in {where}: nothing to show in Neo4j Browser. "
                             f"Add memories first (graphmem add ... {_flags(scope)}).")
    held = f"has {counted(memories, 'memory')} but" if memories else "has"
    return NotFoundError(f"{_named(scope)} {held} no graph (entities and relations) in {where}: nothing to show in Neo4j "
                         f"Browser. The graph comes from adds the model reads (graphmem add ... {_flags(scope)}, without "
                         "--no-infer); memories stored verbatim have none (graphmem get-all lists them).")


def _view_values(view: str, scope: Scope, extra: dict[str, Any]) -> dict[str, Any]:
    if view not in VIEWS:
        raise InvalidInputError(f"unknown view {view!r}; choose one of {', '.join(VIEWS)}")
    values: dict[str, Any] = dict(zip(SCOPE_PARAMETERS, (scope.user_id, scope.agent_id, scope.run_id), strict=False))
    for name in load_query(view).extra_parameters:
        value = extra.get(name)
        if value is None or value == "":
            raise InvalidInputError(f"view {view!r} needs {FLAGS.get(name, name)}")
        if name in ("from", "to"):
            value = iso(parse_time(value, field_name=FLAGS[name]))
        values[name] = str(value)
    return values


def _copy(connection: _Connection, graph: Any, out: Out, ontology: Any = None) -> None:
    """Replace the earlier display copy of the scope with the embedded store's graph, in a database
    without any store's data (copies.py)."""
    refuse_store_data(connection, connection.target.bolt_url)
    entities, relations, styled = copy_into(connection, graph, ontology)
    out(f"copied {_named(graph.scope)} from the embedded store: {counted(entities, 'entity')} ({styled} with a styled type), "
        f"{counted(relations, 'relation')} incl. invalidated ones (a display copy, replaced on the next browse)")


def _label_types(connection: _Connection, key: str, out: Out, labels: dict[str, str] = TYPE_LABELS) -> None:
    try:
        connection.run("label_entity_types", {"scope": key, "labels": labels}, write=True)
    except StoreError as exc:  # e.g. a read-only user: the graph still shows, in one colour
        out(f"note: could not add the display labels that colour entities by type ({exc})")


#: relationship types by which a model names the scope's user ("my name is Desmond": HAS_NAME)
NAME_TYPES = ["HAS_NAME", "IS_NAMED", "NAMED", "NAME_IS", "CALLED", "GOES_BY"]


def _caption_self(connection: _Connection, scope: Scope, key: str, out: Out) -> None:
    from graphmem.types import canonical_name

    params = {"scope": key, "self_canonical": canonical_name(scope.self_name), "name_types": NAME_TYPES}
    try:
        connection.run("caption_self", params, write=True)
    except StoreError as exc:  # a read-only user: the own node keeps its id as caption
        out(f"note: could not caption the scope's own node with the user's name ({exc})")


def _with_server_browser_url(connection: _Connection, target: Target, out: Out) -> Target:
    found = connection.browser_url()
    if found is None:
        out(f"note: the server did not say where it serves Browser; assuming {target.browser_url} (--browser-url to change)")
        return target
    return replace(target, browser_url=found)


def _note(line: str) -> None:
    print(line, file=sys.stderr)


def _named(scope: Scope) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in scope.properties().items() if v is not None)


def _flags(scope: Scope) -> str:
    names = {"user_id": "--user", "agent_id": "--agent", "run_id": "--run"}
    return " ".join(f"{names[k]} {v}" for k, v in scope.properties().items() if v is not None)


# --- the command ---------------------------------------------------------------------------------


def run(ns: Any, config: dict[str, Any] | None) -> int:
    """``graphmem browse``: notes on stderr, the URL alone on stdout."""
    scope = Scope.of(ns.user_id, ns.agent_id, ns.run_id)
    extra = {"entity": ns.entity, "from": ns.date_from, "to": ns.date_to, "relation_id": ns.relation}
    result = browse(config, scope, ns.query, extra, browser_url=ns.browser_url, ports=(ns.bolt_port, ns.http_port))
    cfg = MemoryConfig.load(config)
    style = write_style(cfg.graph_store.ontology, cfg.history_db_path.expanduser().parent)
    _note(f"style (once per web browser): run :style in Neo4j Browser and drop {style} on its frame")
    _note("tip: with its default 'connect result nodes' setting Browser also draws relationships between the nodes "
          "it shows; user_graph leaves out entities without a current relation, but a relation retired between two "
          "still-connected entities is drawn too: :config autoComplete: false shows only what the query returns")
    _note(f"other views: graphmem browse --query {'|'.join(VIEWS)}")
    _note("open this URL and press Run (the editor holds the query):")
    print(result.url)
    if ns.open:
        import webbrowser

        if not webbrowser.open(result.url):
            _note("could not open a web browser here; copy the URL instead")
    return 0


__all__ = ["DISPLAY_PORTS", "BrowseResult", "Target", "browse", "browser_link", "default_browser_url", "run"]
