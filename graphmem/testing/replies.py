"""The tools graphmem's stages call, each with the empty reply the scripted server gives when
nothing is scripted for it. The server and the provider profiles (which look for these tool names in
a prompt) both read it, so it lives apart from both.
"""

from __future__ import annotations

from typing import Any

#: Replies used when nothing is scripted for a known tool (unknown tools get ``{}``).
DEFAULT_REPLIES: dict[str, dict[str, Any]] = {
    "extract_entities": {"entities": []},
    "establish_relationships": {"relations": []},
    "delete_graph_memory": {"relations": []},
    "extract_facts": {"facts": []},
    "update_memory": {"memory": []},
    "summarize": {"summary": ""},
}
