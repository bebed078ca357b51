"""OpenTelemetry tracing (issue 46): the span tree of a staged add and a search on every store, read
with the SDK's in-memory exporter; gen_ai token counts equal to the add's usage; db.* attributes;
scope ids on the call's span and no message text anywhere; errors recorded redacted; tracing off
records nothing and imports nothing."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest
from conftest import TEST_DIMS
from helpers import graph, make_memory, script
from tracing_helpers import children, descendants, named, one, texts

from graphmem import ConfigError, NotFoundError
from graphmem.schema.resources import load_cypher
from graphmem.testing import Fault

STAGES = ("facts", "graph_extraction", "invalidation", "memory_update")


@pytest.fixture
def memory(server, store, tmp_path):
    m = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "h.db"), context={"summary_every": 0})
    yield m
    m.close()


def move(server, memory, uid):
    """Boston, then a move to Denver: the second add runs all four stages."""
    script(server, graph([("I", "person"), ("Boston", "city")], [("I", "lives_in", "Boston")]))
    server.enqueue("extract_facts", {"facts": ["Lives in Boston"]})
    memory.add("I live in Boston.", user_id=uid)
    script(server, graph([("I", "person"), ("Denver", "city")], [("I", "lives_in", "Denver")], [("I", "lives_in", "Boston")]))
    server.enqueue("extract_facts", {"facts": ["Lives in Denver"]})
    return memory.add("I moved to Denver.", user_id=uid)


def test_a_staged_add_is_one_tree_with_stages_model_requests_and_statements(memory, server, store, spans, uid):
    script(server, graph([("I", "person"), ("Boston", "city")], [("I", "lives_in", "Boston")]))
    server.enqueue("extract_facts", {"facts": ["Lives in Boston"]})
    memory.add("I live in Boston.", user_id=uid)
    spans.clear()
    script(server, graph([("I", "person"), ("Denver", "city")], [("I", "lives_in", "Denver")], [("I", "lives_in", "Boston")]))
    server.enqueue("extract_facts", {"facts": ["Lives in Denver"]})
    result = memory.add("I moved to Denver.", user_id=uid)
    finished = list(spans.get_finished_spans())

    root = one(finished, "graphmem.add")
    assert root.parent is None and root.attributes["graphmem.user_id"] == uid
    assert root.attributes["graphmem.store"] == ("neo4j" if type(store).__name__ == "Neo4jStore" else "embedded")
    assert {s.context.trace_id for s in finished} == {root.context.trace_id}
    assert len(descendants(finished, root)) == len(finished) - 1  # every span hangs from the call's

    stages = {s.name: s for s in children(finished, root) if s.name.startswith("graphmem.stage.")}
    assert set(stages) == {f"graphmem.stage.{name}" for name in STAGES}
    chats = named(finished, "chat scripted")
    assert chats and all(c.parent.span_id in {s.context.span_id for s in stages.values()} for c in chats)
    assert all(c.attributes["gen_ai.operation.name"] == "chat" and c.attributes["gen_ai.request.model"] == "scripted"
               and c.attributes["gen_ai.provider.name"] == "openai" and c.attributes["gen_ai.response.model"] for c in chats)
    usage = result["usage"]
    assert len(chats) == usage["llm_requests"]
    assert sum(c.attributes["gen_ai.usage.input_tokens"] for c in chats) == usage["prompt_tokens"] > 0
    assert sum(c.attributes["gen_ai.usage.output_tokens"] for c in chats) == usage["completion_tokens"] > 0
    assert root.attributes["graphmem.usage.prompt_tokens"] == usage["prompt_tokens"]
    embeddings = [s for s in finished if s.name.startswith("embeddings ")]
    assert len(embeddings) == usage["embedding_requests"] and embeddings[0].parent.span_id == root.context.span_id
    assert embeddings[0].attributes["gen_ai.operation.name"] == "embeddings"

    statements = [s for s in finished if "db.operation.name" in (s.attributes or {})]
    names = {s.name for s in statements}
    if type(store).__name__ == "Neo4jStore":
        assert {"scope_lock", "conversation", "resolve", "write_graph", "COMMIT"} <= names
        write = one(statements, "write_graph")
        assert write.attributes["db.system.name"] == "neo4j" and write.attributes["db.query.text"] == load_cypher("write_graph")
        assert write.attributes["db.query.summary"] == "write_graph" and write.attributes["server.port"] > 0
    else:
        assert {"conversation", "resolve", "match_entities", "write", "COMMIT"} <= names
        assert one(statements, "write").attributes["db.system.name"] == "graphmem_embedded"
        assert one(statements, "COMMIT").parent.span_id == one(statements, "write").context.span_id

    carried = [t for s in finished for t in texts(s)]
    assert not [t for t in carried if "Denver" in t or "Boston" in t]  # no message, fact or entity text


def test_a_search_is_one_tree_both_halves_under_the_call(memory, server, store, spans, uid):
    move(server, memory, uid)
    spans.clear()
    memory.search("where do I live now?", user_id=uid, limit=5)
    finished = list(spans.get_finished_spans())
    root = one(finished, "graphmem.search")
    assert root.parent is None and root.attributes["graphmem.user_id"] == uid and root.attributes["graphmem.search.limit"] == 5
    assert len(descendants(finished, root)) == len(finished) - 1  # the relation half's thread too
    names = {s.name for s in children(finished, root)}
    assert "search_memories" in names and names & {"search_graph", "search_graph_seeds", "search_graph_rows"}
    assert [s for s in finished if s.name.startswith("embeddings ")]
    assert not named(finished, "chat scripted")  # no model on the search path
    reads = [s for s in finished if s.attributes.get("db.system.name") == "neo4j"]
    assert all(s.attributes["graphmem.db.access"] == "read" for s in reads)
    assert not [t for s in finished for t in texts(s) if "where do I live" in t]


def test_include_text_puts_the_messages_and_query_on_the_call_spans(server, tmp_path, spans, uid):
    from graphmem.stores.embedded import EmbeddedStore

    store = EmbeddedStore(tmp_path / "g", TEST_DIMS)
    m = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "h.db"), tracing={"include_text": True})
    try:
        m.add("I keep bees in Lisbon.", user_id=uid, infer=False)
        m.search("bees", user_id=uid)
    finally:
        m.close()
    finished = list(spans.get_finished_spans())
    assert one(finished, "graphmem.add").attributes["graphmem.messages"] == "I keep bees in Lisbon."
    assert one(finished, "graphmem.search").attributes["graphmem.query"] == "bees"


def test_a_failed_call_is_an_error_span_with_its_text_redacted(memory, spans, uid):
    with pytest.raises(NotFoundError):
        memory.update("mem-Zanzibar", "the vault code is 7781")
    call = one(spans.get_finished_spans(), "graphmem.update")
    assert call.status.status_code.name == "ERROR" and call.attributes["error.type"] == "graphmem.errors.NotFoundError"
    (event,) = call.events
    assert event.name == "exception" and event.attributes["exception.message"] == "no memory with id <redacted>"
    assert "Zanzibar" not in event.attributes["exception.stacktrace"] and "Zanzibar" not in call.status.description
    assert not [t for t in texts(call) if "7781" in t]


def test_a_failing_model_request_is_an_error_span_per_attempt(memory, server, spans, uid):
    server.inject(Fault.SERVER_ERROR, times=10, tool="extract_facts")
    script(server, graph([("I", "person"), ("Lisbon", "city")], [("I", "lives_in", "Lisbon")]))
    with pytest.raises(Exception):  # noqa: B017 - LLMUnavailableError; the spans are what is checked
        memory.add("I live in Lisbon.", user_id=uid)
    finished = list(spans.get_finished_spans())
    facts = one(finished, "graphmem.stage.facts")
    attempts = children(finished, facts)
    assert len(attempts) == 3 and all(a.status.status_code.name == "ERROR" for a in attempts)  # max_retries=2
    assert one(finished, "graphmem.add").status.status_code.name == "ERROR"


def test_tracing_off_records_nothing(server, tmp_path, spans, uid):
    from graphmem.stores.embedded import EmbeddedStore

    m = make_memory(server, EmbeddedStore(tmp_path / "g", TEST_DIMS), TEST_DIMS, history_db_path=str(tmp_path / "h.db"),
                    tracing={"enabled": False})
    try:
        m.add("I keep bees.", user_id=uid, infer=False)
        m.search("bees", user_id=uid)
    finally:
        m.close()
    assert spans.get_finished_spans() == ()


def test_without_opentelemetry_imported_nothing_is_imported_or_traced(tmp_path):
    """The default ("auto") in a process that never imported OpenTelemetry: no import, no cost."""
    program = textwrap.dedent(f"""
        import sys
        from graphmem import Memory
        from graphmem.embeddings import HashingEmbedder
        m = Memory({{"graph_store": {{"provider": "embedded", "config": {{"path": {str(tmp_path / 'g')!r}}}}},
                    "history_db_path": {str(tmp_path / 'h.db')!r}, "llm": {{"config": {{"api_key": "unused"}}}}}},
                   embedder=HashingEmbedder(dims=64))
        m.add("I keep bees.", user_id="u", infer=False)
        assert m.search("bees", user_id="u")["results"]
        m.close()
        print(sorted(name for name in sys.modules if name.startswith("opentelemetry")))
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_tracing_on_without_the_extra_is_a_config_error(tmp_path):
    program = textwrap.dedent("""
        import sys
        sys.modules["opentelemetry"] = None  # as if the extra were not installed
        from graphmem.config import MemoryConfig
        from graphmem import ConfigError
        try:
            MemoryConfig.load({"tracing": {"enabled": True}})
        except ConfigError as exc:
            print("refused:", exc)
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert "refused: tracing.enabled is true but OpenTelemetry is not installed" in done.stdout, done.stderr[-2000:]
    assert "graphmem[tracing]" in done.stdout
    with pytest.raises(ConfigError):
        from graphmem.config import MemoryConfig

        MemoryConfig.load({"tracing": {"enabled": "sometimes"}})


def test_auto_traces_once_the_application_sets_a_tracer_provider(tmp_path):
    """OpenTelemetry imported (FastAPI and the MCP SDK import it) but no provider set: no spans made;
    the provider set later (after the Memory was built): the next call is traced."""
    program = textwrap.dedent(f"""
        import opentelemetry.trace
        from graphmem import Memory
        from graphmem.embeddings import HashingEmbedder
        from graphmem.observability import wanted
        m = Memory({{"graph_store": {{"provider": "embedded", "config": {{"path": {str(tmp_path / 'g')!r}}}}},
                    "history_db_path": {str(tmp_path / 'h.db')!r}, "llm": {{"config": {{"api_key": "unused"}}}}}},
                   embedder=HashingEmbedder(dims=64))
        print("before:", wanted("auto"))
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        opentelemetry.trace.set_tracer_provider(provider)
        m.add("I keep bees.", user_id="u", infer=False)
        m.close()
        print("after:", sorted({{s.name for s in exporter.get_finished_spans()}}))
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "before: False" in done.stdout
    assert "after: ['COMMIT', 'embeddings hashing-64', 'graphmem.add', 'write']" in done.stdout, done.stdout
