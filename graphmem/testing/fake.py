"""A fake model for your own tests: graphmem's scripted OpenAI-compatible server as a supported API.

Your memory code talks to it over real HTTP with the real ``openai`` client, exactly as to a real
provider; nothing in graphmem is patched. It serves chat completions (the extraction stages) and
embeddings (deterministic hashed vectors: lexical, not semantic), so a test needs no key, no
network and no model download::

    from graphmem import Memory
    from graphmem.testing import FakeModel

    with FakeModel() as fake:
        fake.when("I moved to Denver", facts=["Lives in Denver"],
                  entities=[("I", "person"), ("Denver", "city")], relations=[("I", "lives_in", "Denver")])
        memory = Memory(fake.config(store_path=tmp_path / "graph", history_db_path=tmp_path / "h.db"))
        memory.add("I moved to Denver", user_id="alice")
        assert memory.search("Denver", user_id="alice")["relations"][0]["destination"] == "Denver"
        assert fake.calls("extract_facts") == 1 and fake.prompt_tokens > 0

How a request is answered (each extraction tool of one request separately):
1. a fault injected with :meth:`fail` (429, 500, timeouts, malformed output...), oldest first;
2. a reply queued with :meth:`reply` for that tool (FIFO);
3. your rule functions (:meth:`rule`), newest first: ``fn(tool, text, body) -> reply or None``;
4. a :meth:`when` script whose text is in the newest messages;
5. echo (``echo=True``, the default): the newest user message becomes one memory fact, no graph.

The pytest plugin (``graphmem.testing.pytest_plugin``, registered on install) gives a ``fake_model``
fixture: a started FakeModel, stopped after the test.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from graphmem.testing.consolidate import decide, match_retirements, new_facts, shown_memories, shown_relations, user_name
from graphmem.testing.scripted_server import Fault, RecordedRequest, Reply, ScriptedLLMServer

log = logging.getLogger("graphmem.testing")

#: ``fn(tool, newest_text, request_body) -> reply | None``; a reply is the tool's arguments (a dict).
Rule = Callable[[str, str, dict[str, Any]], Reply | None]
Triple = tuple[str, str, str]

_NEWEST = "Newest messages:"


class FakeModel:
    """A local fake LLM + embedder on 127.0.0.1 (one port); start with ``with`` or :meth:`start`."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, latency: float = 0.0, dims: int = 256,
                 echo: bool = True) -> None:
        """``port`` 0 picks a free one; ``latency`` seconds per chat answer; ``dims`` the embedding size;
        ``echo``: unscripted messages become one fact each (False: the model extracts nothing)."""
        self.server = ScriptedLLMServer(host=host, port=port, model="graphmem-fake", latency=latency)
        self.dims = dims
        self.server.embedding_dims = dims
        self.echo = echo
        self._rules: list[Rule] = []
        self._scripts: list[tuple[str, dict[str, Any]]] = []
        #: why scripted items could not be used (a retirement naming no relation shown to the model, ...)
        self.problems: list[str] = []
        self.server.set_handler(self._answer)

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> FakeModel:
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()

    def __enter__(self) -> FakeModel:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (``http://127.0.0.1:PORT/v1``) for ``llm.config.base_url``."""
        return self.server.base_url

    # -- configuration for graphmem -------------------------------------------------------------

    def llm_config(self) -> dict[str, Any]:
        return {"provider": "openai_compatible", "config": {"base_url": self.base_url, "api_key": "fake", "model": "graphmem-fake",
                                                            "max_retries": 1, "retry_wait": 0.01, "timeout": 30}}

    def embedder_config(self) -> dict[str, Any]:
        return {"provider": "openai", "config": {"base_url": self.base_url, "api_key": "fake", "model": "graphmem-fake-embed",
                                                 "dims": self.dims}}

    def config(self, store_path: str | Path | None = None, history_db_path: str | Path | None = None,
               **overrides: Any) -> dict[str, Any]:
        """A ``Memory`` config using this model for the LLM and the embedder; ``store_path``: an embedded
        store folder (else the config's default), ``overrides``: any other config keys."""
        config: dict[str, Any] = {"llm": self.llm_config(), "embedder": self.embedder_config()}
        if store_path is not None:
            config["graph_store"] = {"provider": "embedded", "config": {"path": str(store_path)}}
        if history_db_path is not None:
            config["history_db_path"] = str(history_db_path)
        config.update(overrides)
        return config

    # -- scripting ------------------------------------------------------------------------------

    def when(self, text: str, *, facts: Sequence[str] | None = None, entities: Iterable[tuple[str, str]] = (),
             relations: Iterable[Triple | tuple[str, str, str, str]] = (), retire: Iterable[Triple] = (),
             summary: str | None = None) -> FakeModel:
        """Answer every add whose newest messages contain ``text``: these ``facts`` (None: echo),
        ``entities`` as (name, type), ``relations`` as (source, relationship, destination[, valid_at]),
        ``retire``: existing relations the message contradicts (source, relationship, destination)."""
        replies: dict[str, Any] = {
            "extract_entities": {"entities": [{"entity": n, "entity_type": t} for n, t in entities]},
            "establish_relationships": {"relations": [_relation(r) for r in relations]},
            "delete_graph_memory": {"relations": [{"source": s, "relationship": r, "destination": d} for s, r, d in retire]},
        }
        if facts is not None:
            replies["extract_facts"] = {"facts": list(facts)}
        if summary is not None:
            replies["summarize"] = {"summary": summary}
        self._scripts.append((text, replies))
        return self

    def rule(self, fn: Rule) -> FakeModel:
        """Answer with ``fn(tool, newest_text, body)`` when it returns a reply (newest rule first)."""
        self._rules.insert(0, fn)
        return self

    def reply(self, tool: str, *replies: Reply) -> FakeModel:
        """Queue exact replies for one tool (e.g. ``reply("extract_facts", {"facts": [...]})``)."""
        self.server.enqueue(tool, *replies)
        return self

    def fail(self, fault: Fault | str, times: int = 1, tool: str | None = None, delay: float = 5.0) -> FakeModel:
        """Answer the next ``times`` requests (of ``tool``, or any) with a fault: rate_limit, server_error,
        timeout (``delay`` s), malformed, unknown_tool, no_tool_call, bad_json_body."""
        self.server.inject(fault, times=times, tool=tool, delay=delay)
        return self

    def reset(self) -> None:
        """Forget scripts, rules, queued replies, faults and counts."""
        self.server.reset()
        self.server.set_handler(self._answer)
        self._rules.clear()
        self._scripts.clear()
        self.problems.clear()
        self.server.prompt_tokens = self.server.completion_tokens = 0

    # -- counting -------------------------------------------------------------------------------

    def calls(self, tool: str | None = None) -> int:
        """Chat requests received (faulted ones too), or those offering ``tool``."""
        return self.server.calls(tool)

    @property
    def requests(self) -> list[RecordedRequest]:
        return self.server.requests

    @property
    def prompt_tokens(self) -> int:
        """Prompt tokens reported in the answers' ``usage`` (about 4 characters a token)."""
        return self.server.prompt_tokens

    @property
    def completion_tokens(self) -> int:
        return self.server.completion_tokens

    @property
    def embedding_calls(self) -> int:
        return self.server.embedding_calls

    # -- answering ------------------------------------------------------------------------------

    def _answer(self, tool: str | None, body: dict[str, Any]) -> Reply | None:
        if tool is None:
            return None
        prompt = _last_content(body)
        newest = prompt.rsplit(_NEWEST, 1)[-1] if _NEWEST in prompt else prompt
        for fn in list(self._rules):
            reply = fn(tool, newest, body)
            if reply is not None:
                return reply
        if tool == "update_memory":
            return self._update(prompt, newest, body)
        reply = self._scripted(tool, newest)
        if tool == "delete_graph_memory" and isinstance(reply, dict):
            return {"relations": [_triple_args(t) for t in self._retired(reply, prompt, body)]}
        return reply

    def _scripted(self, tool: str, newest: str) -> Reply | None:
        for text, replies in reversed(self._scripts):
            if text in newest and tool in replies:
                reply: dict[str, Any] = replies[tool]
                return reply
        if tool == "extract_facts" and self.echo:
            said = [line.split(": ", 1)[1].strip() for line in newest.splitlines() if line.startswith("user: ")]
            return {"facts": [s for s in said if s]}
        return None

    def _retired(self, reply: dict[str, Any], prompt: str, body: dict[str, Any], report: bool = True) -> list[Triple]:
        """The scripted retirements as the existing relations shown (copied exactly, as the prompt
        asks); each one that names no shown relation is reported in ``problems`` and logged."""
        wanted = [(str(r.get("source")), str(r.get("relationship")), str(r.get("destination")))
                  for r in reply.get("relations") or [] if isinstance(r, dict)]
        matched, problems = match_retirements(wanted, shown_relations(prompt), user_name(body))
        for problem in problems if report else ():
            self.problems.append(problem)
            log.warning("fake model: %s", problem)
        return matched

    def _update(self, prompt: str, newest: str, body: dict[str, Any]) -> Reply | None:
        """The memory-update stage as a careful model (graphmem/testing/consolidate.py): staged, from
        the prompt's new facts and no_longer_true marks; single pass, from this same answer's facts
        and retirements."""
        facts = new_facts(prompt)
        retired: list[Triple] = []
        if facts is None:  # single pass: one answer for all five tools
            if "extract_facts" not in {t.get("function", {}).get("name") for t in body.get("tools") or [] if isinstance(t, dict)}:
                return None
            reply = self._scripted("extract_facts", newest)
            facts = [f for f in (reply.get("facts") or []) if isinstance(f, str)] if isinstance(reply, dict) else []
            scripted = self._scripted("delete_graph_memory", newest)
            retired = self._retired(scripted, prompt, body, report=False) if isinstance(scripted, dict) else []
        return decide(shown_memories(prompt), facts, retired, user_name(body), self._relations_of)

    def _relations_of(self, fact: str) -> list[tuple[str, str]]:
        """The (relationship, destination) pairs asserted by the scripts that give ``fact``."""
        return [(r["relationship"], r["destination"]) for _, replies in self._scripts
                if fact in (replies.get("extract_facts") or {}).get("facts", [])
                for r in replies["establish_relationships"]["relations"]]


def _triple_args(t: Triple) -> dict[str, str]:
    return {"source": t[0], "relationship": t[1], "destination": t[2]}


def _relation(r: tuple[str, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {"source": r[0], "relationship": r[1], "destination": r[2]}
    if len(r) > 3 and r[3]:
        out["valid_at"] = r[3]
    return out


def _last_content(body: dict[str, Any]) -> str:
    messages = body.get("messages") or [{}]
    content = messages[-1].get("content", "") if isinstance(messages[-1], dict) else ""
    return content if isinstance(content, str) else json.dumps(content)


__all__ = ["FakeModel", "Fault", "Rule"]
