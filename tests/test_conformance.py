"""One conversation through every provider profile, in both add modes, on both stores: the same
graph and memories.

The conversation (graphmem/testing/conformance.py): a move that retires a relation and a memory (the
invalidation names the user "I"), then a turn that retires nothing. Each profile
(graphmem/testing/providers.py) refuses what its provider refuses and answers the way it answers;
in each add mode graphmem must end with exactly what plain tool calling ends with in that mode, and
each kind of refusal may cost at most one request per client (in the first add, never later).

Requests per add: the staged mode makes 2-4 answered requests; single_pass makes exactly one on
every profile that takes tool calls with ``tool_choice: "required"``. The others, documented in
docs/models.md: a server without tools answers the one request in JSON mode (one per add); a
vLLM without ``--enable-auto-tool-choice`` takes only a named tool choice, so the five tools cost
one request each (five per add).

One store of each kind serves the whole module (every run has its own user: scopes keep them apart).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

import pytest

from graphmem.testing.conformance import run_conversation, summary
from graphmem.testing.providers import PROFILES, ProviderProfile
from tests.conftest import TEST_DIMS, make_store

MODES = ("staged", "single_pass")
#: answered chat requests per single_pass add where it is not one (see the module docstring)
SINGLE_PASS_REQUESTS = {"vllm-no-auto-choice": 5}
Outcome = tuple[set, set, set]


@pytest.fixture(scope="module", params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def shared_store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    store = make_store(request.param, request, tmp_path_factory.mktemp(f"conformance-{request.param}"))
    yield store
    store.close()


@pytest.fixture(scope="module")
def references() -> dict[tuple[int, str], Outcome]:
    return {}


def reference(store: Any, mode: str, cache: dict[tuple[int, str], Outcome]) -> Outcome:
    """The plain tool-calling profile's outcome in ``mode`` on this store (run once, for its own user)."""
    key = (id(store), mode)
    if key not in cache:
        run = run_conversation(PROFILES["openai"], store, TEST_DIMS, mode)
        run.server.stop()
        cache[key] = summary(run.everything)
    return cache[key]


def takes_required_tool_choice(profile: ProviderProfile) -> bool:
    return profile.tools and "required" not in profile.refused_choices


def answered_per_add(profile: ProviderProfile, mode: str) -> int | None:
    """The answered chat requests each add must make (None: staged, where it varies by turn)."""
    if mode == "staged":
        return None
    return 1 if takes_required_tool_choice(profile) else SINGLE_PASS_REQUESTS.get(profile.name, 1)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", sorted(PROFILES))
def test_every_profile_gives_the_plain_graph_and_memories(name: str, mode: str, shared_store, references) -> None:
    expected = reference(shared_store, mode, references)
    profile = PROFILES[name]
    run = run_conversation(profile, shared_store, TEST_DIMS, mode)
    try:
        current, retired, memories = summary(run.everything)
        assert (current, retired, memories) == expected
        assert ("USER", "LIVES_IN", "Denver") in current and ("USER", "LIVES_IN", "Boston") in retired
        assert ("Lives in Boston", False) in memories and ("Lives in Denver", True) in memories
        events = [[r["event"] for r in result["relations"] if r["event"] == "INVALIDATE"] for result in run.results]
        assert events == [[], ["INVALIDATE"], []]
        assert all(n <= 1 for n in Counter(run.server.refusals()).values()), run.server.refusals()
        assert run.refused_per_add[1:] == [0, 0], "a refusal is learnt in the first add, never repeated"
        answered = [n - r for n, r in zip(run.requests_per_add, run.refused_per_add, strict=True)]
        assert [r["usage"]["llm_requests"] for r in run.results] == answered
        want = answered_per_add(profile, mode)
        if want is None:
            assert all(n >= 2 for n in answered), answered
        else:
            assert answered == [want] * len(run.results), answered
        assert all(r["usage"]["prompt_tokens"] > 0 for r in run.results)
        assert run.memory.usage()["llm_requests"] == sum(answered)
    finally:
        run.server.stop()


def test_json_mode_makes_a_vllm_without_auto_choice_one_request_per_single_pass_add(shared_store, references) -> None:
    """The fix docs/models.md gives for that server: ``structured_output: json`` asks the five tools
    in one JSON-mode request (vLLM honours response_format), so single_pass is one request again."""
    expected = reference(shared_store, "single_pass", references)
    profile = dataclasses.replace(PROFILES["vllm-no-auto-choice"], client_config={"structured_output": "json"})
    run = run_conversation(profile, shared_store, TEST_DIMS, "single_pass")
    try:
        assert summary(run.everything) == expected
        assert run.requests_per_add == [1, 1, 1] and run.server.refusals() == []
        bodies = [r.body for r in run.server.requests]
        assert all("tools" not in b and b["response_format"]["type"] == "json_schema" for b in bodies)
    finally:
        run.server.stop()


@pytest.mark.parametrize("mode", MODES)
def test_the_reference_profile_retires_through_the_self_reference(mode: str, shared_store, references) -> None:
    """The plain run really exercises the stages: an invalidation naming "I" retired Boston."""
    current, retired, memories = reference(shared_store, mode, references)
    assert retired == {("USER", "LIVES_IN", "Boston")}
    assert current == {("USER", "LIVES_IN", "Denver"), ("USER", "WORKS_AT", "Acme"), ("USER", "LEARNS", "piano")}
    assert {m for m, live in memories if live} == {"Lives in Denver", "Works at Acme", "Is learning the piano"}
