"""An MCP client talking to `graphmem mcp` over stdio (the way Claude Desktop or Cursor do).

    pip install 'graphmem[mcp]'
    python examples/mcp_client.py

The server serves one user (--user alice): its tools take no scope, so a model cannot reach
another user's memories.
"""

import asyncio
import json
import sys
import tempfile
from pathlib import Path

from _models import models
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

SCRIPT = [{"text": "My daughter Mia starts school in September", "facts": ["Daughter Mia starts school in September"],
           "entities": [("I", "person"), ("Mia", "person")], "relations": [("I", "has_daughter", "Mia")]}]


async def main(config_path: str) -> None:
    server = StdioServerParameters(command=sys.executable, args=["-m", "graphmem.cli.main", "mcp", "--user", "alice", "--config", config_path])
    async with Client(server, read_timeout_seconds=60) as client:
        print("tools:", ", ".join(t.name for t in (await client.list_tools()).tools))
        await client.call_tool("add_memory", {"messages": "My daughter Mia starts school in September"})
        result = await client.call_tool("search_memory", {"query": "when does Mia start school?"})
        found = result.structured_content or json.loads(result.content[0].text)
        print("search:", [m["memory"] for m in found["results"]], [(r["relationship"], r["destination"]) for r in found["relations"]])


with models(SCRIPT) as config, tempfile.TemporaryDirectory() as tmp:
    path = Path(tmp) / "config.json"
    path.write_text(json.dumps(config))
    asyncio.run(main(str(path)))
