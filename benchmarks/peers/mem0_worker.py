"""Worker for benchmarks/peers/mem0_compare.py: runs the REAL mem0ai graph memory (``MemoryGraph``) in
mem0's own virtualenv (never imported by graphmem). Reads one JSON command per stdin line, answers
one JSON line: ``{"op": "add"|"search"|"delete_all", "text"/"query", "user_id"}``. Each answer
carries the wall time and the Neo4j statements mem0 ran for that command (every ``Neo4jGraph.query``
call is one statement sent to the server, counted by wrapping that method), with their database
time: ``server_ms``, what the server reported per statement (result_available_after +
result_consumed_after: planning and execution, not the commit), and ``driver_ms``, the time spent
inside the driver's ``execute_query`` (network, server, commit, decoding), by wrapping that method.

    .bench/mem0-venv/bin/python benchmarks/peers/mem0_worker.py '<config json>'
"""

import json
import sys
import time


def main() -> int:
    config = json.loads(sys.argv[1])
    import neo4j
    from langchain_neo4j import Neo4jGraph
    from mem0.configs.base import MemoryConfig
    from mem0.memory.graph_memory import MemoryGraph

    counter = {"statements": 0, "server_ms": 0.0, "driver_ms": 0.0}
    inner = Neo4jGraph.query
    execute = neo4j.Driver.execute_query

    def counted(self, *args, **kwargs):
        counter["statements"] += 1
        return inner(self, *args, **kwargs)

    def timed(self, *args, **kwargs):
        started = time.perf_counter()
        try:
            result = execute(self, *args, **kwargs)
        finally:
            counter["driver_ms"] += (time.perf_counter() - started) * 1000
        summary = result.summary
        counter["server_ms"] += (summary.result_available_after or 0) + (summary.result_consumed_after or 0)
        return result

    Neo4jGraph.query = counted
    neo4j.Driver.execute_query = timed
    graph = MemoryGraph(MemoryConfig(**config))
    print(json.dumps({"ready": True, "setup_statements": counter["statements"]}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        filters = {"user_id": cmd["user_id"]}
        before = dict(counter)
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
        spent = {k: round(counter[k] - before[k], 2) for k in counter}
        print(json.dumps({**result, "wall_ms": round(wall_ms, 2), **spent}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
