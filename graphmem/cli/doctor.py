"""``graphmem doctor``: can the configured model and embedder do graphmem's work?

It sends each LLM stage one small request with the stage's real tools and prints how the model
answered (tool calls, named choice, text parsed, JSON mode), latency, tokens and what the client had
to adapt; a stage that cannot work gets a one-line fix (wrong URL, bad key, a model that answers
neither tools nor JSON). The embedder is checked too, and the configured store opened with its dimensions and precision
(the embedded one read-only).
Exit 0 when everything works, 1 otherwise; never a traceback.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphmem.errors import ConfigError, GraphMemError, LLMResponseError

if TYPE_CHECKING:  # `graphmem --help` registers this command: it must not load pydantic or the SDK
    from graphmem.llm.base import LLM, ToolSpec

MODES = {"tool_calls": "tool calls", "named_choice": "named choice", "text": "text parsed", "json": "JSON mode"}


@dataclass
class StageCheck:
    stage: str
    ok: bool
    mode: str = ""
    millis: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str = ""
    fix: str = ""


def add_parser(sub: Any) -> None:
    p = sub.add_parser("doctor", help="check the configured model and embedder", description="Send each LLM stage one small request and check the embedder; print how the model answered, latency, tokens, adapted parameters and a one-line fix for what cannot work. Exit 0 when everything works.")
    p.add_argument("--config", type=Path, help="JSON config file (default: the one every command finds: $GRAPHMEM_CONFIG, "
                   "else ./graphmem.json, else $GRAPHMEM_HOME/config.json, else the defaults of Memory())")


def _stages() -> list[tuple[str, list[ToolSpec], str]]:
    from graphmem.stages.facts import FACTS_TOOL
    from graphmem.stages.graph_extraction import ENTITIES_TOOL, RELATIONS_TOOL
    from graphmem.stages.invalidation import INVALIDATION_TOOL
    from graphmem.stages.memory_update import UPDATE_TOOL

    return [
        ("graph_extraction", [ENTITIES_TOOL, RELATIONS_TOOL], "I moved to Denver and I work at Acme."),
        ("facts", [FACTS_TOOL], "I moved to Denver."),
        ("invalidation", [INVALIDATION_TOOL], "Existing: alice -- LIVES_IN -- Boston. Newest message: I moved to Denver."),
        ("memory_update", [UPDATE_TOOL], 'Existing memories: [{"id": "0", "text": "Lives in Boston"}]. New facts: ["Lives in Denver"]'),
    ]


def check_stage(llm: LLM, stage: str, tools: list[ToolSpec], message: str) -> StageCheck:
    from graphmem.stages.base import PromptTemplate

    system = PromptTemplate.load("doctor").render()
    chat = [{"role": "system", "content": system}, {"role": "user", "content": message}]
    try:
        getattr(llm, "_client", None)  # load the SDK first: its import is not the model's latency
        started = time.perf_counter()
        result = llm.call_tools(stage, chat, tools)
    except GraphMemError as exc:  # ConfigError too: no key at all
        return StageCheck(stage, False, error=_one_line(str(exc)), fix=fix_for(exc, llm))
    millis = (time.perf_counter() - started) * 1000
    return StageCheck(stage, True, MODES.get(result.mode, result.mode), millis, result.prompt_tokens, result.completion_tokens)


def fix_for(exc: BaseException, llm: Any = None) -> str:
    """One line saying what to change, read from the error, what caused it and the model asked."""
    cause = type(exc.__cause__).__name__ if exc.__cause__ is not None else ""
    text = str(exc).lower()
    if cause in ("APIConnectionError", "APITimeoutError") or "connection error" in text:
        fake = _fake_llm_command(llm)
        if fake:  # the offline and download profiles' model is graphmem's own fake: start it
            return (f"fix: nothing answers at {llm.base_url}, where the config expects graphmem's fake model: start it in "
                    f"another shell: {fake} (--script FILE scripts its answers)")
        return "fix: nothing answers at that address: check llm.config.base_url (e.g. http://localhost:11434/v1) and that the server runs"
    if isinstance(exc, ConfigError) and "no api key" in text:
        return ("fix: no API key was sent: set OPENAI_API_KEY or llm.config.api_key, or use a model that needs none "
                "(graphmem init: the offline profile, with graphmem fake-llm)")
    if cause in ("AuthenticationError", "PermissionDeniedError") or "api key" in text or "api_key" in text or "401" in text:
        return "fix: the server refused the key: set llm.config.api_key (or OPENAI_API_KEY) to a valid key"
    if cause == "NotFoundError" or "404" in text:
        return "fix: no such endpoint or model: check llm.config.base_url (it usually ends in /v1) and llm.config.model"
    if "takes no tools" in text or isinstance(exc, LLMResponseError):
        return ("fix: the model answers neither tool calls nor JSON: use a model with tool support, or serve it with "
                "a tool-call parser (vLLM --tool-call-parser) or structured outputs (response_format json_schema)")
    return "fix: see the error above; graphmem doctor --config FILE checks a config file"


def _fake_llm_command(llm: Any) -> str | None:
    """`graphmem fake-llm [--port N]` when the config asks for the fake model (init's offline and
    download profiles name it graphmem-fake) on this machine; else None."""
    from urllib.parse import urlsplit

    from graphmem.testing.command import DEFAULT_PORT

    if getattr(llm, "model", None) != "graphmem-fake" or not getattr(llm, "base_url", None):
        return None
    parts = urlsplit(str(llm.base_url))
    if parts.hostname not in ("127.0.0.1", "localhost", "::1"):
        return None
    port = parts.port or 80
    return "graphmem fake-llm" if port == DEFAULT_PORT else f"graphmem fake-llm --port {port}"


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) < 240 else line[:237] + "..."


def check_embedder(config: Any) -> tuple[bool, str]:
    """The embedder answers, and the configured store opens with its dimensions (what the next
    command would meet: another embedder's store, an unreadable folder, an unreachable Neo4j)."""
    from graphmem.factory import build_embedder

    try:
        embedder = build_embedder(config.embedder)
        started = time.perf_counter()
        dims = len(embedder.embed(["graphmem doctor"])[0])
    except GraphMemError as exc:
        return False, f"embedder: FAILED: {' '.join(str(exc).split())}\n  fix: {_embedder_fix(str(exc))}"
    precision = getattr(embedder, "precision", "fp32")  # as Memory passes it to the store
    line = f"embedder: {embedder.name}, {dims} dimensions, {precision}, {(time.perf_counter() - started) * 1000:.0f} ms"
    ok, store_line = check_store(config.graph_store, dims, precision)
    return ok, f"{line}\n{store_line}"


def check_store(store_config: Any, dims: int, precision: str = "fp32") -> tuple[bool, str]:
    """Open the store as the next command would (the embedded one read-only: no lock is taken, so a
    running `graphmem serve` does not matter), with the embedder's dimensions and precision."""
    from graphmem.config import EmbeddedSettings
    from graphmem.errors.redact import redact_url
    from graphmem.factory import build_store

    settings = store_config.settings()
    embedded = isinstance(settings, EmbeddedSettings)
    where = f"embedded store {settings.path.expanduser()}" if embedded else f"Neo4j {redact_url(settings.url)}"
    if embedded and not settings.path.expanduser().exists():
        return True, f"store: {where} (empty: the first add creates it)"
    if embedded:
        store_config = store_config.model_copy(update={"config": {**store_config.config, "read_only": True}})
    try:
        # ConfigError: an existing Neo4j vector index of other dimensions, or vectors of another precision
        store = build_store(store_config, dims, embedder_precision=precision)
        try:
            store.setup()
        finally:
            store.close()
    except GraphMemError as exc:
        return False, f"store: {where}: FAILED: {' '.join(str(exc).split())}\n  {_store_fix(exc, precision)}"
    return True, (f"store: {where} opens with {dims}-dimensional {precision} embeddings"
                  + ("" if embedded else " (fits the Neo4j vector indexes)"))


def _embedder_fix(error: str) -> str:
    text = error.lower()
    if "api key" in text:
        return ("no API key was sent: set OPENAI_API_KEY or embedder.config.api_key, or use an embedder that needs none "
                "(graphmem init --profile offline --force: the hashing embedder)")
    if "cannot download" in text:
        return ("the model could not be downloaded (the error above says why): graphmem init --profile offline --force "
                "needs nothing downloaded; embedder.config.model_dir takes a model folder you have")
    return "check embedder.config: provider, model and its options (docs/configuration.md)"


def _store_fix(exc: GraphMemError, precision: str) -> str:
    from graphmem.stores.precision import built_in

    built = built_in(str(exc))
    if built is not None:
        return (f'fix: set embedder.config.precision to "{built}" (the precision the store\'s vectors were made at, '
                f'instead of "{precision}"), or give this embedder its own store (graph_store.config.path, or another '
                "Neo4j database)")
    return ("fix: use the embedder the store was built with, or give this embedder its own store (graph_store.config.path, "
            "or another Neo4j database)")


def run(ns: argparse.Namespace, config_dict: dict[str, Any] | None) -> int:
    from graphmem.config import MemoryConfig
    from graphmem.factory import build_llm

    try:
        config = MemoryConfig.load(config_dict)
        llm = build_llm(config.llm)
    except GraphMemError as exc:
        print(f"graphmem doctor: {_one_line(str(exc))}")
        return 1
    print(describe(llm))
    checks: list[StageCheck] = []
    for stage, tools, message in _stages():
        if checks and not checks[-1].ok and "fix: the model" not in checks[-1].fix:
            checks.append(StageCheck(stage, False, error="skipped (the same fix applies)"))
            continue  # a wrong URL or key fails every stage alike: do not wait for each
        checks.append(check_stage(llm, stage, tools, message))
    for line in report(checks):
        print(line)
    adapted = getattr(llm, "adapted", [])
    print(f"adapted: {'; '.join(adapted) if adapted else 'nothing'}")
    embedder_ok, line = check_embedder(config)
    print(line)
    ok = embedder_ok and all(c.ok for c in checks)
    print("ok: every stage works" if ok else "not ok: see the fix above")
    return 0 if ok else 1


def describe(llm: Any) -> str:
    profile = getattr(llm, "profile", None)
    where = llm._endpoint() if hasattr(llm, "_endpoint") else "?"
    if profile is None:
        return f"model: {getattr(llm, 'model', '?')} at {where}"
    temperature = "no temperature" if profile.temperature is None else f"temperature {profile.temperature}"
    effort = f", reasoning_effort {profile.reasoning_effort}" if profile.reasoning_effort else ""
    kind = "reasoning" if profile.reasoning else "chat"
    return f"model: {llm.model} at {where} ({kind} profile: {profile.max_tokens_param}, {temperature}{effort})"


def report(checks: list[StageCheck]) -> list[str]:
    lines = [f"  {'stage':<18}{'answer':<14}{'latency':>9}{'prompt':>8}{'completion':>12}"]
    for c in checks:
        if c.ok:
            lines.append(f"  {c.stage:<18}{c.mode:<14}{c.millis:>6.0f} ms{c.prompt_tokens:>8}{c.completion_tokens:>12}")
        else:
            lines.append(f"  {c.stage:<18}FAILED: {c.error}")
    fixes = list(dict.fromkeys(c.fix for c in checks if not c.ok and c.fix))
    return lines + [f"  {fix}" for fix in fixes]


__all__ = ["StageCheck", "add_parser", "check_stage", "run"]
