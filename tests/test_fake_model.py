"""The fake model for users' tests (graphmem.testing.FakeModel, the ``fake_model`` pytest fixture from
the installed plugin, ``graphmem fake-llm``) and the one base URL that reaches the LLM and the
embedder (GRAPHMEM_BASE_URL / ``base_url``). Everything goes over real HTTP with the real client."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
from servers import free_port

from graphmem import LLMError, Memory
from graphmem.config import MemoryConfig


def _memory(fake, tmp_path, **extra) -> Memory:
    return Memory(fake.config(store_path=tmp_path / "graph", history_db_path=tmp_path / "h.db", context={"summary_every": 0}, **extra))


def test_the_fixture_comes_from_the_installed_plugin(request, fake_model):
    plugin = request.config.pluginmanager.get_plugin("graphmem")
    assert plugin is not None and plugin.__name__ == "graphmem.testing.pytest_plugin"
    assert fake_model.base_url.startswith("http://127.0.0.1:") and fake_model.base_url.endswith("/v1")


def test_scripted_answers_per_message_build_the_graph(fake_model, tmp_path):
    fake_model.when("I moved to Denver", facts=["Lives in Denver"], entities=[("I", "person"), ("Denver", "city")],
                    relations=[("I", "lives_in", "Denver")])
    with _memory(fake_model, tmp_path) as memory:
        added = memory.add("I moved to Denver last spring", user_id="alice")
        assert [r["memory"] for r in added["results"]] == ["Lives in Denver"]
        assert [(r["source"], r["relationship"], r["destination"]) for r in added["relations"]] == [("alice", "LIVES_IN", "Denver")]
        found = memory.search("Denver", user_id="alice")
        assert found["relations"][0]["destination"] == "Denver"
    assert fake_model.calls("extract_facts") == 1 and fake_model.calls() == 2
    assert fake_model.prompt_tokens > 100 and fake_model.completion_tokens > 0 and fake_model.embedding_calls >= 2


def test_unscripted_messages_echo_as_facts_and_rules_answer_first(fake_model, tmp_path):
    with _memory(fake_model, tmp_path) as memory:
        assert [r["memory"] for r in memory.add("I drink my coffee black", user_id="bob")["results"]] == ["I drink my coffee black"]
        fake_model.rule(lambda tool, text, body: {"facts": [text.strip().upper()]} if tool == "extract_facts" and "tea" in text else None)
        assert [r["memory"] for r in memory.add("I like tea", user_id="bob")["results"]] == ["USER: I LIKE TEA"]
        again = memory.add("I drink my coffee black", user_id="bob")  # the update stage sees it exists: nothing new
        assert again["results"] == []


def test_faults_are_injected_and_counted(fake_model, tmp_path):
    with _memory(fake_model, tmp_path) as memory:  # max_retries 1: one 429 is retried
        fake_model.fail("rate_limit", times=1, tool="extract_facts")
        assert memory.add("I sail on weekends", user_id="cy")["results"][0]["memory"] == "I sail on weekends"
        assert [r.fault for r in fake_model.requests if r.fault] == ["rate_limit"]
        fake_model.fail("server_error", times=10)
        with pytest.raises(LLMError):
            memory.add("I hike", user_id="cy")
        assert [m["memory"] for m in memory.get_all(user_id="cy")["results"]] == ["I sail on weekends"]  # nothing half-written
    fake_model.reset()
    assert fake_model.calls() == 0 and fake_model.prompt_tokens == 0


def test_one_base_url_reaches_the_llm_and_the_embedder(fake_model, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("GRAPHMEM_LLM_BASE_URL", raising=False)
    monkeypatch.setenv("GRAPHMEM_BASE_URL", fake_model.base_url)
    config = {"graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "g")}},
              "history_db_path": str(tmp_path / "h.db")}
    loaded = MemoryConfig.load(config)
    assert loaded.llm.config.base_url == loaded.embedder.config["base_url"] == fake_model.base_url
    with Memory(config) as memory:  # the defaults (openai LLM, text-embedding-3-small) now talk to the fake
        assert memory.add("I keep bees", user_id="dee")["results"][0]["memory"] == "I keep bees"
        assert memory.search("bees", user_id="dee")["results"][0]["memory"] == "I keep bees"
    assert fake_model.calls() >= 1 and fake_model.embedding_calls >= 2
    # an explicit setting wins over the shared one
    pinned = MemoryConfig.load({**config, "llm": {"provider": "ollama", "config": {"base_url": "http://127.0.0.1:1/v1"}}})
    assert pinned.llm.config.base_url == "http://127.0.0.1:1/v1" and pinned.embedder.config["base_url"] == fake_model.base_url


def test_fake_llm_command_serves_the_cli(tmp_path):
    port = free_port()
    script = tmp_path / "answers.json"
    script.write_text(json.dumps([{"text": "My sister Ana lives in Porto", "facts": ["Sister Ana lives in Porto"],
                                   "entities": [["I", "person"], ["Ana", "person"], ["Porto", "city"]],
                                   "relations": [["I", "has_sister", "Ana"], ["Ana", "lives_in", "Porto"]]}]))
    log = tmp_path / "fake.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "graphmem.cli.main", "fake-llm", "--port", str(port), "--script", str(script)],
                                stdout=out, stderr=subprocess.STDOUT)
    try:
        url = f"http://127.0.0.1:{port}/v1"
        deadline = time.monotonic() + 60
        while f"at {url}" not in log.read_text(errors="replace"):
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text(errors="replace")
            time.sleep(0.1)
        assert f"export GRAPHMEM_BASE_URL={url}" in log.read_text()
        config = tmp_path / "c.json"
        config.write_text(json.dumps({"graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "g")}},
                                      "history_db_path": str(tmp_path / "h.db")}))
        env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "GRAPHMEM_LLM_BASE_URL")}
        env["GRAPHMEM_BASE_URL"] = url

        def cli(*args: str) -> str:
            done = subprocess.run([sys.executable, "-m", "graphmem.cli.main", *args, "--config", str(config)], env=env,
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 0, done.stderr
            return done.stdout

        added = cli("add", "My sister Ana lives in Porto", "--user", "eve")
        assert "eve -[HAS_SISTER]-> Ana" in added and "Ana -[LIVES_IN]-> Porto" in added
        assert "Sister Ana lives in Porto" in cli("search", "Porto", "--user", "eve")
    finally:
        proc.terminate()
        proc.wait(20)
    assert "stopped after 2 chat requests" in log.read_text()


def _script_the_move(fake) -> None:
    fake.when("I live in Boston", facts=["Lives in Boston"], entities=[("I", "person"), ("Boston", "city")],
              relations=[("I", "lives_in", "Boston")])
    fake.when("I moved to Denver", facts=["Lives in Denver"], entities=[("me", "person"), ("Denver", "city")],
              relations=[("me", "lives_in", "Denver")], retire=[("I", "lives_in", "Boston")])


@pytest.mark.parametrize("mode", ["staged", "single_pass"])
def test_the_fake_consolidates_a_move_like_a_careful_model(fake_model, tmp_path, mode):
    """The README's story: the retired relation's memory is UPDATEd to the new fact, in both add modes."""
    _script_the_move(fake_model)
    with _memory(fake_model, tmp_path, add_mode=mode) as memory:
        memory.add("I live in Boston", user_id="alice", timestamp="2023-03-01")
        moved = memory.add("I moved to Denver last month", user_id="alice", timestamp="2024-06-15")
        assert [(r["memory"], r["event"]) for r in moved["results"]] == [("Lives in Denver", "UPDATE")]
        assert [m["memory"] for m in memory.get_all(user_id="alice")["results"]] == ["Lives in Denver"]
        found = memory.search("where do I live?", user_id="alice")
        assert found["results"][0]["memory"] == "Lives in Denver"
        assert [r["destination"] for r in found["relations"]] == ["Denver"]
        history = memory.history(found["results"][0]["id"])
        assert [(e["event"], e["new_memory"]) for e in history] == [("ADD", "Lives in Boston"), ("UPDATE", "Lives in Denver")]
    assert fake_model.problems == []


@pytest.mark.parametrize("mode", ["staged", "single_pass"])
def test_the_fake_deletes_a_memory_whose_relation_ends_without_a_replacement(fake_model, tmp_path, mode):
    fake_model.when("I love badminton", facts=["Loves badminton", "Has a dog"], entities=[("I", "person"), ("badminton", "activity")],
                    relations=[("I", "loves", "badminton")])
    fake_model.when("I do not like badminton any more", facts=["Has given up sports"], entities=[("I", "person"), ("badminton", "activity")],
                    retire=[("me", "LOVES", "Badminton")])
    with _memory(fake_model, tmp_path, add_mode=mode) as memory:
        memory.add("I love badminton", user_id="alice")
        changed = memory.add("I do not like badminton any more", user_id="alice")
        assert sorted((r["memory"], r["event"]) for r in changed["results"]) == [("Has given up sports", "ADD"), ("Loves badminton", "DELETE")]
        assert sorted(m["memory"] for m in memory.get_all(user_id="alice")["results"]) == ["Has a dog", "Has given up sports"]
        assert memory.get_all(user_id="alice")["relations"] == []
    assert fake_model.problems == []


@pytest.mark.parametrize("mode", ["staged", "single_pass"])
def test_an_unusable_scripted_retirement_says_which_and_why(fake_model, tmp_path, mode, caplog):
    _script_the_move(fake_model)
    fake_model.when("Actually I left Chicago", facts=[], entities=[("I", "person"), ("Austin", "city")],
                    relations=[("I", "works_in", "Austin")], retire=[("I", "lives_in", "Chicago")])
    with _memory(fake_model, tmp_path, add_mode=mode) as memory:
        memory.add("I live in Boston", user_id="alice")
        with caplog.at_level("WARNING", logger="graphmem.testing"):
            memory.add("Actually I left Chicago", user_id="alice")
        assert sorted(r["destination"] for r in memory.get_all(user_id="alice")["relations"]) == ["Austin", "Boston"]
    assert fake_model.problems == ["retire ['I', 'lives_in', 'Chicago']: not one of the existing relations shown "
                                   "to the model (alice LIVES_IN Boston)"]
    assert "retire ['I', 'lives_in', 'Chicago']" in caplog.text


def test_a_bad_script_item_is_refused_with_its_place_and_reason(tmp_path):
    from graphmem.errors import ConfigError
    from graphmem.testing.command import load_script

    script = tmp_path / "answers.json"
    script.write_text(json.dumps([{"text": "I moved", "retire": [["I", "lives_in"]]}]))
    with pytest.raises(ConfigError, match=r"answers.json\[0\]\.retire\[0\]: .*\[source, relationship, destination\]"):
        load_script(script)
    script.write_text(json.dumps([{"text": "I moved", "entities": [["Denver"]]}]))
    with pytest.raises(ConfigError, match=r"answers.json\[0\]\.entities\[0\]: .*\[name, type\]"):
        load_script(script)


@pytest.mark.parametrize("user", ["alice", "user_1"])
def test_demo_stories_retire_badminton_for_any_user(fake_model, tmp_path, user):
    """`graphmem fake-llm --demo-stories` answers for whoever speaks: the scripted retirement says "I"
    (it named the demo's own user id, so another user's badminton was never retired: issue 46)."""
    from graphmem.cli.demo import STORIES
    from graphmem.testing.command import answer_demo_stories

    answer_demo_stories(fake_model)
    with _memory(fake_model, tmp_path) as memory:
        for text, _ in STORIES["badminton"]:
            memory.add(text, user_id=user)
        relations = memory.get_all(user_id=user, include_invalidated=True)["relations"]
        assert [(r["relationship"], r["invalid_at"] is not None) for r in relations] == [("LOVES_PLAYING", True)]
        assert memory.get_all(user_id=user)["relations"] == []


@pytest.mark.parametrize("mode", ["staged", "single_pass"])
def test_a_relation_to_the_users_own_name_is_dropped_saying_which_and_why(fake_model, tmp_path, mode, caplog):
    """For user id "alice", ("I", "has_name", "Alice") joins the user's node to itself: dropped, and the
    warning names the relation and the reason, not only {'relations': 1}."""
    fake_model.when("My name is Alice", facts=["Name is Alice"], entities=[("I", "person"), ("Alice", "person")],
                    relations=[("I", "has_name", "Alice")])
    with _memory(fake_model, tmp_path, add_mode=mode) as memory, caplog.at_level("WARNING", logger="graphmem"):
        added = memory.add("My name is Alice", user_id="alice")
    assert added["relations"] == [] and added["dropped"] == {"relations": 1}
    warning = next(r.getMessage() for r in caplog.records if "dropped" in r.getMessage())
    assert "relation ('I', 'has_name', 'Alice'): both ends are the user 'alice'" in warning, warning
