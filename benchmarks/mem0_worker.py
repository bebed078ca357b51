"""Worker for benchmarks/mem0_compare.py: runs the REAL mem0ai graph memory (``MemoryGraph``) in
mem0's own virtualenv (never imported by graphmem). Reads one JSON command per stdin line, answers
one JSON line: ``{"op": "add"|"search"|"delete_all", "text"/"query", "user_id"}``. Each answer
carries the wall time and the Neo4j statements mem0 ran for that command (every ``Neo4jGraph.query``
call is one statement sent to the server, counted by wrapping that method).

    .bench/mem0-venv/bin/python benchmarks/mem0_worker.py '<config json>'
"""

import json
import sys
import time


def main() -> int:
    config = json.loads(sys.argv[1])
    from langchain_neo4j import Neo4jGraph
    from mem0.configs.base import MemoryConfig
    from mem0.memory.graph_memory import MemoryGraph

    counter = {"statements": 0}
    inner = Neo4jGraph.query

    def counted(self, *args, **kwargs):
        counter["statements"] += 1
        return inner(self, *args, **kwargs)

    Neo4jGraph.query = counted
    graph = MemoryGraph(MemoryConfig(**config))
    print(json.dumps({"ready": True, "setup_statements": counter["statements"]}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        filters = {"user_id": cmd["user_id"]}
        before = counter["statements"]
        started = time.perf_counter()
        if cmd["op"] == "add":
            out = graph.add(cmd["text"], filters)
            result = {"added": len(out["added_entities"]), "deleted": len(out["deleted_entities"])}
        elif cmd["op"] == "search":
            result = {"hits": graph.search(cmd["query"], filters, limit=100)}
        else:
            graph.delete_all(filters)
            result = {}
        wall_ms = (time.perf_counter() - started) * 1000
        print(json.dumps({**result, "wall_ms": round(wall_ms, 2), "statements": counter["statements"] - before}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
