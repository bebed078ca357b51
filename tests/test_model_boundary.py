"""The model boundary: request profiles, self-healing, fallbacks for servers without clean tool calls,
self-references in every stage, usage accounting and `graphmem doctor`, against the scripted server's
provider profiles (graphmem/testing/providers.py) over real HTTP."""

from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest

from graphmem import Memory
from graphmem.embeddings import HashingEmbedder
from graphmem.errors import LLMResponseError, LLMUnavailableError
from graphmem.llm.base import ToolSpec
from graphmem.llm.openai import OpenAILLM
from graphmem.llm.profiles import choose_profile, is_reasoning_model
from graphmem.llm.structured import calls_from_text
from graphmem.stages.facts import FACTS_TOOL
from graphmem.stages.graph_extraction import ENTITIES_TOOL, RELATIONS_TOOL
from graphmem.testing import ScriptedLLMServer
from graphmem.testing.providers import BROKEN_PROFILES, PROFILES, ProviderProfile
from tests.helpers import graph, llm_config, script

ROOT = Path(__file__).resolve().parent.parent
CHAT = [{"role": "system", "content": "Extract."}, {"role": "user", "content": "I moved to Denver."}]


def tool(name: str, *required: str) -> ToolSpec:
    props = {k: {"type": "array", "items": {"type": "string"}} for k in required}
    return ToolSpec(name, f"tool {name}", {"type": "object", "properties": props, "required": list(required)})


FIVE = [tool(f"t{i}", f"k{i}") for i in range(5)]


def client(server: ScriptedLLMServer, model: str, **kw) -> OpenAILLM:
    return OpenAILLM(model=model, api_key="k", base_url=server.base_url, max_retries=0, retry_wait=0.01, **kw)


@pytest.fixture
def served(request):
    """A scripted server with the profile named by the test's parameter."""
    profile = request.param if isinstance(request.param, ProviderProfile) else PROFILES[request.param]
    with ScriptedLLMServer(profile=profile) as s:
        yield s, profile


# --- request profiles and self-healing -------------------------------------------------------------


def test_reasoning_families_are_known_by_name_also_behind_a_gateway_prefix() -> None:
    for name in ("gpt-5", "gpt-5-mini", "o1", "o3-mini", "o4-mini", "openai/gpt-5-nano", "O3"):
        assert is_reasoning_model(name), name
    for name in ("gpt-4.1-mini", "gpt-4o", "llama3:8b", "omni-7b", "o10x"):
        assert not is_reasoning_model(name), name
    profile = choose_profile("gpt-5-mini")
    assert profile.params(100) == {"max_completion_tokens": 100, "reasoning_effort": "low"}
    assert choose_profile("gpt-4.1-mini").params(100) == {"max_tokens": 100, "temperature": 0.0}
    forced = choose_profile("prod-deployment", reasoning=True, temperature=None, reasoning_effort="medium")
    assert forced.params(5) == {"max_completion_tokens": 5, "reasoning_effort": "medium"}


@pytest.mark.parametrize("served", ["openai-reasoning"], indirect=True)
def test_a_reasoning_model_by_name_is_asked_right_the_first_time(served) -> None:
    server, profile = served
    llm = client(server, profile.model)
    server.enqueue("extract_facts", {"facts": ["Lives in Denver"]})
    assert llm.call_tool("facts", CHAT, FACTS_TOOL) == [{"facts": ["Lives in Denver"]}]
    body = server.requests[0].body
    assert "max_tokens" not in body and body["max_completion_tokens"] == 2000
    assert "temperature" not in body and body["reasoning_effort"] == "low"
    assert server.refusals() == [] and llm.usage.refused == 0


@pytest.mark.parametrize("served", ["gateway-reasoning"], indirect=True)
def test_an_unknown_name_heals_once_per_parameter_and_remembers(served, caplog) -> None:
    server, profile = served
    llm = client(server, profile.model)
    with caplog.at_level(logging.WARNING, logger="graphmem.llm.profiles"):
        for _ in range(4):
            server.enqueue("extract_facts", {"facts": ["x"]})
            assert llm.call_tool("facts", CHAT, FACTS_TOOL) == [{"facts": ["x"]}]
    assert sorted(server.refusals()) == ["max_tokens", "temperature"]  # one each, never one per call
    assert len([r for r in caplog.records if "refused" in r.getMessage()]) == 2
    last = server.requests[-1].body
    assert "max_tokens" not in last and "temperature" not in last and last["max_completion_tokens"] == 2000
    assert llm.adapted == ["sends max_completion_tokens instead of max_tokens", "omits temperature"]
    assert llm.usage.refused == 2 and llm.usage.calls == 4


@pytest.mark.parametrize("served", ["azure-openai"], indirect=True)
def test_config_names_the_profile_for_a_deployment_name(served) -> None:
    server, profile = served
    memory = Memory(
        {"llm": {"provider": "azure_openai", "config": {"model": profile.model, "api_key": "k", "azure_endpoint": server.url,
                                                         "api_version": "2024-10-21", "reasoning": True, "max_retries": 0}}},
        embedder=HashingEmbedder(dims=32), store=_embedded(),
    )
    server.enqueue("extract_facts", {"facts": []})
    memory.llm.call_tool("facts", CHAT, FACTS_TOOL)
    request = server.requests[0]
    assert request.body["max_completion_tokens"] == 2000 and "temperature" not in request.body
    assert server.refusals() == []
    memory.close()


def test_temperature_null_in_config_is_never_sent(server) -> None:
    memory = Memory({"llm": llm_config(server, temperature=None, max_tokens_param="max_completion_tokens", reasoning_effort="medium")},
                    embedder=HashingEmbedder(dims=32), store=_embedded())
    memory.llm.call_tool("facts", CHAT, FACTS_TOOL)
    body = server.requests[0].body
    assert "temperature" not in body and "max_tokens" not in body and body["max_completion_tokens"] == 2000
    assert body["reasoning_effort"] == "medium"  # set explicitly: sent even to a model not known as reasoning
    memory.close()


# --- structured output without clean tool calls -------------------------------------------------------


@pytest.mark.parametrize("served", ["ollama-no-tools"], indirect=True)
def test_a_server_without_tools_gets_json_mode_after_one_refusal(served) -> None:
    server, profile = served
    llm = client(server, profile.model)
    server.enqueue("extract_entities", {"entities": [{"entity": "Denver", "entity_type": "city"}]})
    server.enqueue("establish_relationships", {"relations": [{"source": "I", "relationship": "lives_in", "destination": "Denver"}]})
    result = llm.call_tools("graph", CHAT, [ENTITIES_TOOL, RELATIONS_TOOL])
    assert result.mode == "json"
    assert result.of("extract_entities") == [{"entities": [{"entity": "Denver", "entity_type": "city"}]}]
    assert result.of("establish_relationships")[0]["relations"][0]["destination"] == "Denver"
    for _ in range(3):
        assert llm.call_tool("facts", CHAT, FACTS_TOOL) == [{"facts": []}]
    assert server.refusals() == ["tools"]
    later = server.requests[-1].body
    assert "tools" not in later and later["response_format"]["type"] == "json_schema"
    assert "extract_facts" in later["messages"][0]["content"]  # the schema is in the prompt too


@pytest.mark.parametrize("served", ["ollama-no-tools"], indirect=True)
def test_structured_output_tools_refuses_to_fall_back(served) -> None:
    server, profile = served
    llm = client(server, profile.model, structured_output="tools")
    with pytest.raises(LLMUnavailableError, match="structured_output"):
        llm.call_tool("facts", CHAT, FACTS_TOOL)


def test_structured_output_json_never_offers_tools(server) -> None:
    llm = client(server, "m", structured_output="json")
    server.enqueue("extract_facts", {"facts": ["a"]})
    server.profile = PROFILES["openai"]  # the plain profile answers JSON-mode requests too
    assert llm.call_tool("facts", CHAT, FACTS_TOOL) == [{"facts": ["a"]}]
    assert "tools" not in server.requests[0].body


def test_json_schema_refused_falls_back_to_json_object_once() -> None:
    profile = ProviderProfile("old-json", tools=False, refused_formats=frozenset({"json_schema"}))
    with ScriptedLLMServer(profile=profile) as server:
        llm = client(server, "m")
        for _ in range(3):
            server.enqueue("extract_facts", {"facts": ["b"]})
            assert llm.call_tool("facts", CHAT, FACTS_TOOL) == [{"facts": ["b"]}]
        assert sorted(server.refusals()) == ["response_format", "tools"]
        assert server.requests[-1].body["response_format"] == {"type": "json_object"}


@pytest.mark.parametrize("served", ["vllm-hermes-text", "vllm-fence-text"], indirect=True)
def test_calls_written_as_text_are_parsed(served) -> None:
    server, profile = served
    llm = client(server, profile.model)
    server.enqueue("extract_entities", {"entities": [{"entity": "Denver", "entity_type": "city"}]})
    server.enqueue("establish_relationships", {"relations": []})
    result = llm.call_tools("graph", CHAT, [ENTITIES_TOOL, RELATIONS_TOOL])
    assert result.mode == "text"
    assert result.of("extract_entities") == [{"entities": [{"entity": "Denver", "entity_type": "city"}]}]
    assert result.of("establish_relationships") == [{"relations": []}]
    assert server.refusals() == []


@pytest.mark.parametrize("served", ["vllm-no-auto-choice"], indirect=True)
def test_a_refused_required_choice_becomes_one_named_request_per_tool(served) -> None:
    server, profile = served
    llm = client(server, profile.model)
    for i, spec in enumerate(FIVE):
        server.enqueue(spec.name, {f"k{i}": [str(i)]}, {f"k{i}": [str(i * 10)]})
    first = llm.call_tools("add", CHAT, FIVE)
    assert first.mode == "named_choice" and {k: v[0] for k, v in first.calls.items()} == {f"t{i}": {f"k{i}": [str(i)]} for i in range(5)}
    second = llm.call_tools("add", CHAT, FIVE)
    assert second.of("t4") == [{"k4": ["40"]}]
    assert server.refusals() == ["tool_choice"]  # learnt once: the second add sends no "required"
    named = [r.body["tool_choice"] for r in server.requests if not r.refused]
    assert all(isinstance(c, dict) for c in named) and len(named) == 10


@pytest.mark.parametrize("served", ["gateway-args-object"], indirect=True)
def test_arguments_given_as_an_object_are_accepted(served) -> None:
    server, profile = served
    server.enqueue("extract_facts", {"facts": ["Works at Acme"]})
    assert client(server, profile.model).call_tool("facts", CHAT, FACTS_TOOL) == [{"facts": ["Works at Acme"]}]


def test_text_parsing_forms_and_what_it_refuses() -> None:
    facts = [FACTS_TOOL]
    both = [ENTITIES_TOOL, RELATIONS_TOOL]
    assert calls_from_text('<think>{"facts": ["no"]}</think><tool_call>{"name": "extract_facts", "arguments": {"facts": ["a"]}}</tool_call>', facts) == [("extract_facts", {"facts": ["a"]})]
    assert calls_from_text('```json\n{"name": "extract_facts", "parameters": {"facts": ["b"]}}\n```', facts) == [("extract_facts", {"facts": ["b"]})]
    assert calls_from_text('{"name": "extract_facts", "arguments": "{\\"facts\\": [\\"c\\"]}"}', facts) == [("extract_facts", {"facts": ["c"]})]
    assert calls_from_text('Sure: {"facts": ["d"]}', facts) == [("extract_facts", {"facts": ["d"]})]
    assert calls_from_text('{"relations": []}', both) == [("establish_relationships", {"relations": []})]
    assert calls_from_text('{"name": "drop_database", "arguments": {}}', facts) == []  # a tool not offered
    assert calls_from_text('<tool_call>{"name": "extract_facts", "arguments": {"facts": [</tool_call>', facts) == []
    assert calls_from_text("I cannot help with that.", facts) == []
    assert calls_from_text('{"unrelated": 1}', facts) == []


@pytest.mark.parametrize("served", ["vllm-hermes-text"], indirect=True)
def test_half_parsed_text_writes_nothing(served) -> None:
    server, profile = served
    memory = Memory({"llm": {"provider": "openai_compatible", "config": {"base_url": server.base_url, "api_key": "k", "model": profile.model,
                                                                          "max_retries": 0}}},
                    embedder=HashingEmbedder(dims=32), store=_embedded())
    server.set_handler(lambda tool, body: '{"facts": [' if tool == "extract_facts" else None)  # broken JSON, as text
    with pytest.raises(LLMResponseError):
        memory.add("I moved to Denver.", user_id="alice")
    assert memory.get_all(user_id="alice") == {"results": [], "relations": []}
    memory.close()


# --- self-references ---------------------------------------------------------------------------------


@pytest.mark.parametrize("speaker", ["I", "me", "USER_ID", "the user", "ALICE", "Myself"])
def test_invalidation_resolves_every_self_reference(server, speaker: str) -> None:
    memory = Memory({"llm": llm_config(server)}, embedder=HashingEmbedder(dims=32), store=_embedded())
    script(server, graph([("Boston", "city")], [("alice", "lives_in", "Boston")]))
    memory.add("I live in Boston.", user_id="alice")
    script(server, graph([("Denver", "city")], [("I", "lives_in", "Denver")], deletions=[(speaker, "lives_in", "Boston")]))
    result = memory.add("I moved to Denver.", user_id="alice")
    assert [(r["source"], r["destination"]) for r in result["relations"] if r["event"] == "INVALIDATE"] == [("alice", "Boston")]
    memory.close()


def test_memory_update_names_the_user_for_the_placeholder(server) -> None:
    memory = Memory({"llm": llm_config(server)}, embedder=HashingEmbedder(dims=32), store=_embedded())
    server.enqueue("extract_facts", {"facts": ["Lives in Boston"]}, {"facts": ["Lives in Boston now"]})
    memory.add("I live in Boston.", user_id="alice")
    server.enqueue("update_memory", {"memory": [{"id": "0", "text": "USER_ID lives in Boston", "event": "UPDATE"}]})
    result = memory.add("Still Boston.", user_id="alice")
    assert [m["memory"] for m in result["results"]] == ["alice lives in Boston"]
    memory.close()


# --- usage -------------------------------------------------------------------------------------------


def test_add_reports_its_own_usage_by_stage_and_memory_totals(server) -> None:
    memory = Memory({"llm": llm_config(server)}, embedder=HashingEmbedder(dims=32), store=_embedded())
    script(server, graph([("Boston", "city")], [("alice", "lives_in", "Boston")]))
    server.enqueue("extract_facts", {"facts": ["Lives in Boston"]})
    first = memory.add("I live in Boston.", user_id="alice")["usage"]
    assert first["llm_requests"] == 2 and first["embedding_requests"] == 1
    assert set(first["by_stage"]) == {"graph_extraction", "facts"}
    assert first["prompt_tokens"] == sum(_prompt(r.body) for r in server.requests)  # the server's own counts
    assert sum(s["completion_tokens"] for s in first["by_stage"].values()) == first["completion_tokens"] > 0
    second = memory.add("I like tea.", user_id="alice")["usage"]
    total = memory.usage()
    assert total["llm_requests"] == first["llm_requests"] + second["llm_requests"]
    assert total["prompt_tokens"] == first["prompt_tokens"] + second["prompt_tokens"]
    assert total["embedding_requests"] >= first["embedding_requests"] + second["embedding_requests"]
    memory.close()


def _prompt(body: dict) -> int:
    return sum(len(m["content"]) for m in body["messages"]) // 4


# --- dependencies --------------------------------------------------------------------------------------


def test_dateparser_is_a_core_dependency_and_dates_an_empty_alias() -> None:
    text = (ROOT / "pyproject.toml").read_text()  # tomllib is 3.11+; the project supports 3.10
    core = text.split("dependencies = [", 1)[1].split("]", 1)[0]
    assert '"dateparser>=' in core
    assert re.search(r"^dates = \[\]", text, re.MULTILINE)


# --- graphmem doctor ---------------------------------------------------------------------------------


def doctor(tmp_path: Path, llm: dict, store: Path | None = None) -> subprocess.CompletedProcess:
    config = tmp_path / "config.json"
    graph_store = {"provider": "embedded", "config": {"path": str(store or tmp_path / "graph")}}
    config.write_text(json.dumps({"llm": llm, "embedder": {"provider": "hashing", "config": {"dims": 64}}, "graph_store": graph_store}))
    return subprocess.run([sys.executable, "-m", "graphmem.cli.main", "doctor", "--config", str(config)],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def _llm(base_url: str, model: str, key: str = "good") -> dict:
    return {"provider": "openai_compatible", "config": {"base_url": base_url, "api_key": key, "model": model, "max_retries": 0, "timeout": 5}}


@pytest.mark.parametrize("name", ["openai", "gateway-reasoning", "ollama-no-tools"])
def test_doctor_passes_a_usable_server_and_says_how_it_answered(tmp_path, name: str) -> None:
    profile = PROFILES[name]
    with ScriptedLLMServer(profile=profile, api_key="good") as server:
        run = doctor(tmp_path, _llm(server.base_url, profile.model))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Traceback" not in run.stdout + run.stderr
    expected = {"openai": "tool calls", "gateway-reasoning": "tool calls", "ollama-no-tools": "JSON mode"}[name]
    for stage in ("graph_extraction", "facts", "invalidation", "memory_update"):
        assert any(line.strip().startswith(stage) and expected in line for line in run.stdout.splitlines()), run.stdout
    assert "ok: every stage works" in run.stdout and "embedder: hashing-64, 64 dimensions" in run.stdout
    if name == "gateway-reasoning":
        assert "adapted: sends max_completion_tokens instead of max_tokens; omits temperature" in run.stdout


def test_doctor_opens_the_store_and_reports_what_the_next_command_would_hit(tmp_path) -> None:
    """A store built by another embedder (256 dimensions, the hashing default) is what the next add
    would fail on: doctor says so and exits 1, instead of "ok: every stage works"."""
    built = tmp_path / "built-by-another"
    with Memory({"embedder": {"provider": "hashing"}, "graph_store": {"provider": "embedded", "config": {"path": str(built)}},
                 "history_db_path": str(tmp_path / "h.db")}) as memory:
        memory.add("I keep bees", user_id="dee", infer=False)
    with ScriptedLLMServer(api_key="good") as server:
        fresh = doctor(tmp_path, _llm(server.base_url, "m"))
        other = doctor(tmp_path, _llm(server.base_url, "m"), store=built)
    assert fresh.returncode == 0 and f"store: embedded store {tmp_path / 'graph'} (empty: the first add creates it)" in fresh.stdout
    assert other.returncode == 1 and "ok: every stage works" not in other.stdout, other.stdout
    assert f"store: embedded store {built}: FAILED: graph store {built} holds 256-dimensional embeddings, not the 64" in other.stdout
    assert "graphmem init --data-dir DIR --force" in other.stdout and "not ok" in other.stdout


def _fix_lines(run: subprocess.CompletedProcess) -> list[str]:
    return [line.strip() for line in run.stdout.splitlines() if line.strip().startswith("fix:")]


def test_doctor_fails_a_model_without_tools_or_json_with_one_fix(tmp_path) -> None:
    profile = BROKEN_PROFILES["no-tools-no-json"]
    with ScriptedLLMServer(profile=profile, api_key="good") as server:
        run = doctor(tmp_path, _llm(server.base_url, profile.model))
    assert run.returncode == 1 and "Traceback" not in run.stdout + run.stderr
    assert len(_fix_lines(run)) == 1 and "tool support" in _fix_lines(run)[0]


def test_doctor_fails_a_bad_key_and_a_wrong_url_with_one_fix_each(tmp_path) -> None:
    with ScriptedLLMServer(api_key="good") as server:
        bad_key = doctor(tmp_path, _llm(server.base_url, "m", key="wrong"))
        url = server.base_url
    wrong_url = doctor(tmp_path, _llm(url, "m"))  # the server is gone: nothing answers there
    assert bad_key.returncode == 1 and wrong_url.returncode == 1
    assert "Traceback" not in bad_key.stdout + bad_key.stderr + wrong_url.stdout + wrong_url.stderr
    assert len(_fix_lines(bad_key)) == 1 and "api_key" in _fix_lines(bad_key)[0]
    assert len(_fix_lines(wrong_url)) == 1 and "base_url" in _fix_lines(wrong_url)[0]


def _embedded():
    import tempfile

    from graphmem.stores.embedded import EmbeddedStore

    return EmbeddedStore(path=Path(tempfile.mkdtemp()) / "graph", embedding_dims=32)


@pytest.mark.neo4j
def test_doctor_checks_the_embedder_against_the_neo4j_vector_indexes(tmp_path, neo4j_uri) -> None:
    from graphmem.stores.neo4j import Neo4jStore
    from tests.conftest import TEST_DIMS

    existing = Neo4jStore(url=neo4j_uri, embedding_dims=TEST_DIMS)
    existing.setup()  # the indexes exist, at the suite's size
    existing.close()
    with ScriptedLLMServer(api_key="good") as server:
        config = tmp_path / "config.json"
        for dims in (TEST_DIMS, TEST_DIMS // 2):
            config.write_text(json.dumps({"llm": _llm(server.base_url, "m"), "embedder": {"provider": "hashing", "config": {"dims": dims}},
                                          "graph_store": {"provider": "neo4j", "config": {"url": neo4j_uri}}}))
            run = subprocess.run([sys.executable, "-m", "graphmem.cli.main", "doctor", "--config", str(config)],
                                 capture_output=True, text=True, timeout=120, cwd=ROOT)
            assert "Traceback" not in run.stdout + run.stderr
            if dims == TEST_DIMS:
                assert run.returncode == 0 and "fits the Neo4j vector indexes" in run.stdout, run.stdout
            else:
                assert run.returncode == 1 and f"{TEST_DIMS} dimensions" in run.stdout and len(_fix_lines(run)) == 1, run.stdout
