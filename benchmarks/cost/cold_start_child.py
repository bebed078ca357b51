"""One short-lived process of benchmarks/cost/cold_start.py: import graphmem, build a Memory, add.

Run as a file (``python benchmarks/cost/cold_start_child.py JSON``) so that ``graphmem`` comes from
PYTHONPATH (the baseline checkout) or from the installed package (this checkout). Prints one JSON
line: seconds to import, to build the Memory (``Memory.from_config``), and of each add (after
``settle`` seconds, for a long-lived process whose first request comes after it started).
"""

from __future__ import annotations

import json
import sys
import time


def main() -> None:
    job = json.loads(sys.argv[1])
    started = time.perf_counter()
    from graphmem import Memory

    imported = time.perf_counter()
    memory = Memory.from_config(job["config"])
    built = time.perf_counter()
    # a long-lived process: it started, prepared its clients in the background ("warm_up"), and its first
    # request comes later
    time.sleep(job.get("settle", 0))
    adds = []
    for i in range(job.get("adds", 0)):
        t = time.perf_counter()
        memory.add(job["messages"][i % len(job["messages"])], user_id=job["user"], infer=job.get("infer", True))
        adds.append(time.perf_counter() - t)
    if job.get("cleanup"):
        memory.delete_all(user_id=job["user"])
    memory.close()
    print(json.dumps({"import_s": imported - started, "from_config_s": built - imported, "adds_s": adds}))


if __name__ == "__main__":
    main()
