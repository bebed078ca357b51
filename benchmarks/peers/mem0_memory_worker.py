"""Worker for benchmarks/peers/add_modes.py: the REAL mem0ai 1.0.11 ``Memory`` (its full add: facts in a
local Qdrant and the Neo4j graph, both pipelines in parallel, as mem0 runs them), in mem0's own
virtualenv (never imported by graphmem). One JSON command per stdin line, one JSON line back:
``{"op": "add"|"search"|"delete_all", "text", "user_id"}``. Each answer carries the wall time and the Neo4j
statements mem0 ran (every ``Neo4jGraph.query`` call, counted by wrapping that method).

    .bench/mem0-venv/bin/python benchmarks/peers/mem0_memory_worker.py '<config json>'
"""

import json
import sys
import threading
import time


def main() -> int:
    config = json.loads(sys.argv[1])
    from langchain_neo4j import Neo4jGraph
    from mem0 import Memory

    counter = {"statements": 0}
    lock = threading.Lock()
    inner = Neo4jGraph.query

    def counted(self, *args, **kwargs):
        with lock:
            counter["statements"] += 1
        return inner(self, *args, **kwargs)

    Neo4jGraph.query = counted
    memory = Memory.from_config(config)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        before = counter["statements"]
        started = time.perf_counter()
        if cmd["op"] == "add":
            out = memory.add(cmd["text"], user_id=cmd["user_id"])
            result = {"results": len(out.get("results", [])), "relations": len((out.get("relations") or {}).get("added_entities", []))}
        elif cmd["op"] == "search":
            out = memory.search(cmd["text"], user_id=cmd["user_id"], limit=100)
            result = {"results": len(out.get("results", [])), "relations": len(out.get("relations") or [])}
        else:
            memory.delete_all(user_id=cmd["user_id"])
            result = {}
        wall_ms = (time.perf_counter() - started) * 1000
        print(json.dumps({**result, "wall_ms": round(wall_ms, 2), "statements": counter["statements"] - before}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
