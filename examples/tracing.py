"""Tracing: the OpenTelemetry span tree of two adds and a search, with their attributes.

    pip install -e '.[tracing]' opentelemetry-sdk
    python examples/tracing.py                        # offline with the fake model, embedded store
    python examples/tracing.py bolt://127.0.0.1:7687  # the same on a Neo4j

The spans are kept in memory and printed as a tree; an application would export them with OTLP
instead (docs/observability.md). The second add moves the user, so its invalidation and memory
update stages run too. No message text is on any span (``tracing.include_text`` is off).
"""

import sys
from typing import Any

from _models import models
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from graphmem import Memory

SCRIPT = [
    {"text": "I live in Boston", "facts": ["Lives in Boston"], "entities": [("I", "person"), ("Boston", "city")],
     "relations": [("I", "lives_in", "Boston")]},
    {"text": "I moved to Denver", "facts": ["Lives in Denver"], "entities": [("I", "person"), ("Denver", "city")],
     "relations": [("I", "lives_in", "Denver")], "retire": [("I", "lives_in", "Boston")]},
]
#: attributes too long to print in a tree (the query text is the statement's cypher/ file)
LONG = ("db.query.text",)

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)


def print_tree(spans: list[ReadableSpan]) -> None:
    children: dict[Any, list[ReadableSpan]] = {}
    for s in spans:
        children.setdefault(s.parent.span_id if s.parent else None, []).append(s)

    def show(s: ReadableSpan, depth: int) -> None:
        ms = ((s.end_time or 0) - (s.start_time or 0)) / 1e6
        attributes = ", ".join(f"{k}={v!r}" for k, v in (s.attributes or {}).items()
                               if k not in LONG and not k.startswith(("db.system", "gen_ai.system")))
        print(f"{'  ' * depth}{s.name} [{ms:.1f} ms] {attributes}")
        for child in sorted(children.get(s.context.span_id, []), key=lambda c: c.start_time or 0):
            show(child, depth + 1)

    for root in children.get(None, []):
        show(root, 0)


with models(SCRIPT) as config, Memory({**config, "warm_up": False}) as memory:
    if len(sys.argv) > 1:  # a Neo4j instead of the embedded store
        memory.close()
        config = {**config, "graph_store": {"provider": "neo4j", "config": {"url": sys.argv[1]}}, "warm_up": False}
        memory = Memory(config)
    memory.add("I live in Boston.", user_id="alice")
    exporter.clear()  # the tree of the second add: it retires Boston
    added = memory.add("I moved to Denver.", user_id="alice")
    print_tree(list(exporter.get_finished_spans()))
    print("usage:", {k: v for k, v in added["usage"].items() if k != "by_stage"})
    exporter.clear()
    memory.search("where do I live?", user_id="alice", limit=5)
    print_tree(list(exporter.get_finished_spans()))
    memory.delete_all(user_id="alice")
    memory.close()
