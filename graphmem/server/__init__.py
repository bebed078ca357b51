"""The network doors to the one engine: ``graphmem serve`` (REST, rest.py) and ``graphmem mcp``
(MCP, mcp.py). Both run ``AsyncMemory`` and check scopes with access.py. Optional: install
``graphmem[server]`` / ``graphmem[mcp]``.

An interface: may import anything below it (the facade, core, stores, foundation); nothing
but cli imports it.
"""
