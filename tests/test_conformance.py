"""One conversation through every provider profile, on both stores: the same graph and memories.

The conversation (graphmem/testing/conformance.py): a move that retires a relation and a memory (the
invalidation names the user "I"), then a turn that retires nothing. Each profile
(graphmem/testing/providers.py) refuses what its provider refuses and answers the way it answers;
graphmem must end with exactly what plain tool calling ends with, and each kind of refusal may cost
at most one request per client.
"""

from __future__ import annotations

from collections import Counter

import pytest

from graphmem.testing.conformance import run_conversation, summary
from graphmem.testing.providers import PROFILES
from tests.conftest import TEST_DIMS, make_store


def reference(store, request, tmp_path) -> tuple:
    """The plain tool-calling profile's outcome, on a fresh store of the same kind."""
    kind = "neo4j" if type(store).__name__ == "Neo4jStore" else "embedded"
    run = run_conversation(PROFILES["openai"], make_store(kind, request, tmp_path / "reference"), TEST_DIMS)
    run.memory.close()
    run.server.stop()
    return summary(run.everything)


@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_profile_gives_the_plain_graph_and_memories(name: str, store, request, tmp_path) -> None:
    expected = reference(store, request, tmp_path)
    run = run_conversation(PROFILES[name], store, TEST_DIMS)
    try:
        current, retired, memories = summary(run.everything)
        assert (current, retired, memories) == expected
        assert ("USER", "LIVES_IN", "Denver") in current and ("USER", "LIVES_IN", "Boston") in retired
        assert ("Lives in Boston", False) in memories and ("Lives in Denver", True) in memories
        events = [[r["event"] for r in result["relations"] if r["event"] == "INVALIDATE"] for result in run.results]
        assert events == [[], ["INVALIDATE"], []]
        assert all(n <= 1 for n in Counter(run.server.refusals()).values()), run.server.refusals()
        assert all(r["usage"]["llm_requests"] >= 2 and r["usage"]["prompt_tokens"] > 0 for r in run.results)
        assert run.memory.usage()["llm_requests"] == sum(r["usage"]["llm_requests"] for r in run.results)
    finally:
        run.server.stop()


def test_the_reference_profile_retires_through_the_self_reference(store, request, tmp_path) -> None:
    """The plain run really exercises the stages: an invalidation naming "I" retired Boston."""
    current, retired, memories = reference(store, request, tmp_path)
    assert retired == {("USER", "LIVES_IN", "Boston")}
    assert current == {("USER", "LIVES_IN", "Denver"), ("USER", "WORKS_AT", "Acme"), ("USER", "LEARNS", "piano")}
    assert {m for m, live in memories if live} == {"Lives in Denver", "Works at Acme", "Is learning the piano"}
