"""What graphmem tells a newcomer must be true (issue 46, item 6): the download profile with no
network, doctor with no key and with the offline profile's fake model not started, doctor's --help,
serve's banner and its bare address, counts in words, browse for a user with memories but no graph,
and the inspector's Memories tab under a moment of the Graph tab. Real processes, real servers,
headless Chromium for the page."""

from __future__ import annotations

import json
import os
import subprocess

import httpx
import pytest
from servers import free_port, graphmem_command, running, write_config
from test_browser import chrome  # noqa: F401 - a fixture
from test_inspector import by_id, serving, wait

from graphmem import Memory
from graphmem.cli.main import main
from graphmem.schema.counts import counted
from graphmem.testing import FakeModel

DEAD = "http://127.0.0.1:9"  # nothing listens there


def _newcomer_env(tmp_path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRAPHMEM_", "OPENAI_", "HF_"))}
    return {**env, "GRAPHMEM_HOME": str(tmp_path / "home"), "PYTHONUNBUFFERED": "1", **extra}


def _cli(tmp_path, env, *args: str) -> subprocess.CompletedProcess:
    work = tmp_path / "project"
    work.mkdir(exist_ok=True)
    return subprocess.run(graphmem_command(*args), cwd=work, env=env, capture_output=True, text=True, timeout=300)


def test_the_download_profile_without_network_fails_at_once_with_the_ways_on(tmp_path):
    """With the hub unreachable, the first command stops after one quick request (not huggingface_hub's
    half minute of retries), and the message is whole and names what to do instead."""
    env = _newcomer_env(tmp_path, HF_ENDPOINT=DEAD)
    assert _cli(tmp_path, env, "init", "--profile", "download").returncode == 0
    added = _cli(tmp_path, env, "add", "I moved to Denver", "--user", "alice", "--no-infer")
    assert added.returncode == 1
    error = added.stderr.strip().splitlines()[-1]
    assert error.startswith("graphmem: error: cannot download the embedding model 'BAAI/bge-small-en-v1.5': the model hub at "
                            f"{DEAD} is unreachable from here"), added.stderr
    assert "graphmem init --profile offline --force" in error and "model_dir" in error and error.endswith("reach.")
    assert "Retrying" not in added.stderr  # the hub library's retries never started
    doctor = _cli(tmp_path, env, "doctor")
    embedder = next(line for line in doctor.stdout.splitlines() if line.startswith("embedder:"))
    assert embedder.endswith("or HF_ENDPOINT set to a mirror you can reach.") and "..." not in embedder  # not cut
    fix = doctor.stdout.split(embedder, 1)[1].splitlines()[1]
    assert "graphmem init --profile offline --force" in fix and "graphmem init writes a working one" not in doctor.stdout


def test_doctor_without_a_key_says_none_was_sent(tmp_path):
    done = _cli(tmp_path, _newcomer_env(tmp_path), "doctor")
    assert done.returncode == 1 and "Traceback" not in done.stdout + done.stderr
    assert "refused the key" not in done.stdout and ".." not in done.stdout.replace("...", ""), done.stdout
    fixes = [line.strip() for line in done.stdout.splitlines() if line.strip().startswith("fix:")]
    assert fixes[0].startswith("fix: no API key was sent: set OPENAI_API_KEY or llm.config.api_key"), fixes
    assert fixes[1].startswith("fix: no API key was sent: set OPENAI_API_KEY or embedder.config.api_key"), fixes


def test_doctor_on_the_offline_profile_says_to_start_the_fake_model(tmp_path):
    port = free_port()  # nothing listens: the fake model was not started
    env = _newcomer_env(tmp_path)
    assert _cli(tmp_path, env, "init", "--llm-base-url", f"http://127.0.0.1:{port}/v1").returncode == 0
    done = _cli(tmp_path, env, "doctor")
    fixes = [line.strip() for line in done.stdout.splitlines() if line.strip().startswith("fix:")]
    assert fixes == [f"fix: nothing answers at http://127.0.0.1:{port}/v1, where the config expects graphmem's fake model: "
                     f"start it in another shell: graphmem fake-llm --port {port} (--script FILE scripts its answers)"], done.stdout
    assert "11434" not in done.stdout  # not an Ollama address for a config that names the fake model


def test_doctor_help_names_the_config_every_command_finds(capsys):
    with pytest.raises(SystemExit):
        main(["doctor", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "$GRAPHMEM_CONFIG, else ./graphmem.json, else $GRAPHMEM_HOME/config.json" in text


def test_serve_names_the_inspector_and_its_bare_address_leads_there(tmp_path):
    with FakeModel() as fake:
        config = write_config(tmp_path, fake.base_url, "embedded")
        port = free_port()
        log = tmp_path / "serve.log"
        base = f"http://127.0.0.1:{port}"
        with running(graphmem_command("serve", "--no-auth", "--port", str(port), "--config", str(config)), f"{base}/health", log):
            bare = httpx.get(base + "/", timeout=10)
            followed = httpx.get(base + "/", timeout=10, follow_redirects=True)
    assert f"inspector: {base}/ui" in log.read_text(), log.read_text()
    assert bare.status_code == 307 and bare.headers["location"] == "/ui"
    assert followed.status_code == 200 and str(followed.url) == f"{base}/ui" and "<html" in followed.text.lower()


def test_counts_are_in_words():
    assert [counted(n, "relation") for n in (0, 1, 2)] == ["0 relations", "1 relation", "2 relations"]
    assert [counted(1, "memory"), counted(3, "memory"), counted(1, "entity"), counted(2, "entity")] == [
        "1 memory", "3 memories", "1 entity", "2 entities"]
    assert counted(1, "current relation") == "1 current relation" and counted(4, "key") == "4 keys"


def test_browse_for_a_user_with_memories_but_no_graph_says_where_a_graph_comes_from(tmp_path, capsys):
    config = {"embedder": {"provider": "hashing", "config": {"dims": 64}}, "history_db_path": str(tmp_path / "h.db"),
              "graph_store": {"provider": "embedded", "config": {"path": str(tmp_path / "graph")}}}
    with Memory(config) as memory:
        memory.add("I prefer window seats", user_id="bob", infer=False)  # a memory, no entity
    path = tmp_path / "c.json"
    path.write_text(json.dumps(config))
    assert main(["browse", "--user", "bob", "--config", str(path)]) == 1
    err = " ".join(capsys.readouterr().err.split())
    assert "user_id='bob' has 1 memory but no graph (entities and relations) in the embedded store" in err, err
    assert "Add memories first" not in err and "without --no-infer" in err
    assert main(["browse", "--user", "nobody", "--config", str(path)]) == 1
    assert "Add memories first" in capsys.readouterr().err  # a user with nothing at all


def test_the_memories_tab_says_it_does_not_time_travel(chrome, tmp_path):  # noqa: F811 - the fixture imported above
    with FakeModel() as fake:
        fake.when("I live in Boston", facts=["Lives in Boston"], entities=[("I", "person"), ("Boston", "city")],
                  relations=[("I", "lives_in", "Boston")])
        config = fake.config(store_path=tmp_path / "graph", history_db_path=tmp_path / "h.db", context={"summary_every": 0})
        with Memory(config) as memory, serving(memory, None) as url:
            memory.add("I live in Boston", user_id="alice", timestamp="2023-03-01")
            chrome.get(f"{url}/ui?user_id=alice")
            wait(chrome, lambda d: d.execute_script("return document.body.dataset.ready") == "1")
            assert by_id(chrome, "memories-time-note").get_attribute("hidden") is not None  # now: nothing to say

            chrome.get(f"{url}/ui?user_id=alice&as_of=2023-12-01")
            wait(chrome, lambda d: d.execute_script("return document.body.dataset.ready") == "1")
            by_id(chrome, "tab-memories").click()
            note = by_id(chrome, "memories-time-note")
            wait(chrome, lambda d: note.is_displayed())
            assert note.text.startswith("The Graph tab shows the graph as of 2023-12-01; memories are listed as they are "
                                        "now (they do not time-travel)."), note.text

            by_id(chrome, "tab-graph").click()
            by_id(chrome, "as-of-now").click()
            wait(chrome, lambda d: by_id(d, "memories-time-note").get_attribute("hidden") is not None)
