"""One huge model answer through the graph-extraction stage: time to validate, resolve and
de-duplicate N relations (the real OpenAI client over HTTP to the local ScriptedLLMServer), and what
the per-add caps keep and drop. The duplicate check is a set lookup, so the time grows linearly
with N (it was a list scan: 10k relations took ~50 s, 50k never finished).

    python -m benchmarks.scale.large_answer 1000 10000 50000
"""

from __future__ import annotations

import argparse
import time

from graphmem.llm import OpenAILLM
from graphmem.stages.conversation import Message
from graphmem.stages.graph_extraction import GraphExtractionStage
from graphmem.testing import ScriptedLLMServer
from graphmem.types import utcnow


def run(relations: int, entities: int = 150) -> tuple[float, int, dict[str, int]]:
    with ScriptedLLMServer() as server:
        names = [{"entity": f"e{i}", "entity_type": "thing"} for i in range(entities)]
        rels = [{"source": f"e{j % entities}", "relationship": f"r{j}", "destination": f"e{(j + 1) % entities}"} for j in range(relations)]
        server.enqueue("extract_entities", {"entities": names})
        server.enqueue("establish_relationships", {"relations": rels})
        stage = GraphExtractionStage(OpenAILLM(model="scripted", api_key="k", base_url=server.base_url))
        start = time.perf_counter()
        out = stage.run([Message("user", "a long story")], "me", utcnow())
        return time.perf_counter() - start, len(out.relations), {k: v for k, v in out.dropped.items() if v}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[1000, 10000, 50000])
    args = parser.parse_args()
    run(10)  # warm-up: the first request pays for the client's imports and connection; not reported
    print(f"{'relations':>10} {'stage s':>8} {'kept':>5}  dropped")
    for size in args.sizes:
        seconds, kept, dropped = run(size)
        print(f"{size:>10} {seconds:>8.2f} {kept:>5}  {dropped}")


if __name__ == "__main__":
    main()
