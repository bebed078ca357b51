"""``graphmem fake-llm``: the fake model (graphmem.testing.FakeModel) left running, for trying the
CLI, the REST and MCP servers or an agent with extraction, offline and without a key.

    graphmem fake-llm [--port 8790] [--script answers.json] [--demo-stories]
    export GRAPHMEM_BASE_URL=http://127.0.0.1:8790/v1      # the LLM and the embedder, in another shell

A script file is a JSON list of {"text", "facts", "entities": [[name, type]], "relations":
[[source, relationship, destination]], "retire": [[s, r, d]]}: an add whose newest messages contain
``text`` gets those answers. Any other message becomes one memory fact (no graph).
"""

from __future__ import annotations

import json
import signal
import sys
import threading
from pathlib import Path
from typing import Any

from graphmem.errors import ConfigError
from graphmem.schema.counts import counted

DEFAULT_PORT = 8790


def add_parser(sub: Any) -> None:
    p = sub.add_parser("fake-llm", help="run a fake OpenAI-compatible model (offline, no key)",
                       description="Serve a fake OpenAI-compatible model (chat completions and embeddings) until stopped, "
                       "for trying graphmem's extraction offline. Unscripted messages become one memory fact each; "
                       "--script scripts graphs per message. Point graphmem at it with GRAPHMEM_BASE_URL.")
    p.add_argument("--host", default="127.0.0.1", help="interface (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}; 0 picks a free one)")
    p.add_argument("--script", type=Path, help="JSON list of {text, facts, entities, relations, retire}")
    p.add_argument("--demo-stories", action="store_true", help="also answer the messages of `graphmem demo`'s stories")
    p.add_argument("--dims", type=int, default=256, help="embedding size for models without a known size (default 256)")


def load_script(path: Path) -> list[dict[str, Any]]:
    """The script file's entries, checked: a bad file is a clear ConfigError before anything starts."""
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ConfigError(f"cannot read the script {path}: {exc}") from exc
    if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("text"), str) for e in entries):
        raise ConfigError(f"{path} must hold a JSON list of objects with a \"text\"")
    allowed = {"text", "facts", "entities", "relations", "retire", "summary"}
    for i, entry in enumerate(entries):
        if set(entry) - allowed:
            raise ConfigError(f"{path}[{i}]: unknown keys {sorted(set(entry) - allowed)}; allowed: {sorted(allowed)}")
        _check_items(f"{path.name}[{i}]", entry)
    return entries


#: the shape of each list of a script entry: (key, accepted lengths, what an item is)
_SHAPES = (("entities", (2,), "[name, type]"), ("relations", (3, 4), "[source, relationship, destination(, valid_at)]"),
           ("retire", (3,), "[source, relationship, destination]"))


def _check_items(where: str, entry: dict[str, Any]) -> None:
    """Each scripted item has its shape ("I", "me" and the user's id all mean the user)."""
    facts = entry.get("facts")
    if facts is not None and not (isinstance(facts, list) and all(isinstance(f, str) for f in facts)):
        raise ConfigError(f"{where}.facts: must be a list of strings, got {json.dumps(facts)}")
    for key, lengths, shape in _SHAPES:
        items = entry.get(key, [])
        if not isinstance(items, list):
            raise ConfigError(f"{where}.{key}: must be a list of {shape} lists, got {json.dumps(items)}")
        for j, item in enumerate(items):
            if not (isinstance(item, list) and len(item) in lengths and all(isinstance(x, str) and x.strip() for x in item)):
                raise ConfigError(f"{where}.{key}[{j}]: {json.dumps(item)} is not {shape} (non-empty strings)")


def answer_demo_stories(fake: Any) -> None:
    """``--demo-stories``: the fake also answers `graphmem demo`'s messages, for whichever user adds them."""
    from graphmem.cli.demo import story_handler

    stories = story_handler()
    fake.rule(lambda tool, text, body: stories(tool, body))


def run(ns: Any) -> int:
    from graphmem.testing.fake import FakeModel

    fake = FakeModel(host=ns.host, port=ns.port, dims=ns.dims)
    if ns.script is not None:
        for entry in load_script(ns.script):
            fake.when(entry["text"], facts=entry.get("facts"), entities=[tuple(e) for e in entry.get("entities", [])],
                      relations=[tuple(r) for r in entry.get("relations", [])], retire=[tuple(r) for r in entry.get("retire", [])],
                      summary=entry.get("summary"))
    if ns.demo_stories:
        answer_demo_stories(fake)
    try:
        fake.start()
    except OSError as exc:
        raise ConfigError(f"cannot listen on {ns.host}:{ns.port}: {exc.strerror}") from exc
    print(f"graphmem fake-llm: a fake OpenAI-compatible model (chat + embeddings) at {fake.base_url}\n"
          f"  use it:  graphmem init's offline profile points at {DEFAULT_PORT}; or export GRAPHMEM_BASE_URL={fake.base_url}"
          "    (the LLM and the embedder)\n"
          f"  unscripted messages become one memory fact each{'; script: ' + str(ns.script) if ns.script else ''}\n"
          "  stop with Ctrl-C", file=sys.stderr, flush=True)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    try:
        stopped.wait()
    except KeyboardInterrupt:
        pass
    finally:
        fake.stop()
        print(f"graphmem fake-llm: stopped after {counted(fake.calls(), 'chat request')}", file=sys.stderr)
    return 0
