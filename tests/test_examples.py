"""Every program in examples/ runs offline (no OPENAI_API_KEY: graphmem's fake model) in its own
process, as a newcomer would run it, and prints what it promises."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"

EXPECTED = {
    "quickstart.py": ["memory: Lives in Denver", "relation: alice LIVES_IN Denver", "relation: alice HAS_SISTER Ana"],
    "time_travel.py": ["lives in (as of 2021-01-01): Boston", "lives in (as of now): Denver",
                       "timeline: LIVES_IN Boston from 2019-03-01 until 2023-06-15", "timeline: LIVES_IN Denver from 2023-06-15 until now"],
    "langgraph_memory.py": ["I remember: Lives in Lisbon since last year"],
    "rest_client.py": ["added: ['Is allergic to peanuts']", "search: ['Is allergic to peanuts'] [('IS_ALLERGIC_TO', 'peanuts')]",
                       "bob's memories with alice's key: 403", "health: ok"],
    "tracing.py": ["graphmem.add [", "  graphmem.stage.invalidation [", "    chat graphmem-fake [", "gen_ai.usage.input_tokens=",
                   "  write [", "graphmem.search [", "  search_memories ["],
    "mcp_client.py": ["tools: add_memory, search_memory", "search: ['Daughter Mia starts school in September'] [('HAS_DAUGHTER', 'Mia')]"],
}


def test_every_example_is_covered():
    assert sorted(p.name for p in EXAMPLES.glob("*.py") if not p.name.startswith("_")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_example_runs_offline(name, tmp_path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("OPENAI_API_KEY", "GRAPHMEM_BASE_URL", "GRAPHMEM_LLM_BASE_URL", "GRAPHMEM_CONFIG")}
    env["GRAPHMEM_HOME"] = str(tmp_path / "home")  # nothing of the machine's own config
    done = subprocess.run([sys.executable, str(EXAMPLES / name)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "using graphmem's fake model" in done.stdout
    for line in EXPECTED[name]:
        assert line in done.stdout, (line, done.stdout)
