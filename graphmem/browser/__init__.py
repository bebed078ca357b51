"""Exploring a scope's graph in Neo4j Browser: saved views (cypher/browser/), a GraSS style,
Browser URLs with a view pre-filled (``graphmem browse``). The Cypher literals they need and the
display labels the style colours by live below, in :mod:`graphmem.schema` (the stores and exports
use them too); they are re-exported here.

Exports (GraphML, JSON, Cypher scripts) live in :mod:`graphmem.lifecycle.export`.

An interface: may import anything below it; nothing but cli imports it.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from graphmem.browser.browse import BrowseResult, Target, browse, browser_link, default_browser_url
    from graphmem.browser.queries import VIEWS, SavedQuery, bound_statement, list_queries, load_query
    from graphmem.browser.style import STYLE_PATH
    from graphmem.schema.labels import TYPE_LABELS, type_label
    from graphmem.schema.literals import cypher_identifier, cypher_string, cypher_value

# Loaded on first access: importing the package must not pay for browse (which talks to Neo4j and
# the launcher) or the query loader.
_LAZY = {
    **dict.fromkeys(("BrowseResult", "Target", "browse", "browser_link", "default_browser_url"), "graphmem.browser.browse"),
    **dict.fromkeys(("cypher_identifier", "cypher_string", "cypher_value"), "graphmem.schema.literals"),
    **dict.fromkeys(("VIEWS", "SavedQuery", "bound_statement", "list_queries", "load_query"), "graphmem.browser.queries"),
    "STYLE_PATH": "graphmem.browser.style",
    **dict.fromkeys(("TYPE_LABELS", "type_label"), "graphmem.schema.labels"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "STYLE_PATH",
    "TYPE_LABELS",
    "VIEWS",
    "BrowseResult",
    "SavedQuery",
    "Target",
    "bound_statement",
    "browse",
    "browser_link",
    "cypher_identifier",
    "cypher_string",
    "cypher_value",
    "default_browser_url",
    "list_queries",
    "load_query",
    "type_label",
]
