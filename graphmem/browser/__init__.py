"""Exploring a scope's graph in Neo4j Browser: saved views (cypher/browser/), a GraSS style,
Browser URLs with a view pre-filled (``graphmem browse``), and the Cypher literals they need.

Exports (GraphML, JSON, Cypher scripts) live in :mod:`graphmem.export`.
"""

from graphmem.browser.browse import (
    BrowseResult,
    Target,
    browse,
    browser_link,
    default_browser_url,
)
from graphmem.browser.literals import cypher_identifier, cypher_string, cypher_value
from graphmem.browser.queries import (
    VIEWS,
    SavedQuery,
    bound_statement,
    list_queries,
    load_query,
)
from graphmem.browser.style import STYLE_PATH, TYPE_LABELS, type_label

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
