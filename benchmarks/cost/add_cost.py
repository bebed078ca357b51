"""Cost per add: replay a scripted 20-message conversation through ``Memory.add`` (infer=True).

The LLM is graphmem's real OpenAI client talking over HTTP to the local ScriptedLLMServer, which
answers every tool call as a good model would (benchmarks/cost/add_script.py). Per add and per stage:
LLM calls, prompt and completion tokens (tiktoken o200k_base counted on the exact request bodies the
server recorded: message contents + 3 per message + 3, plus the tools JSON; completion = the
tool-call arguments sent back), embedding calls, database round trips, and wall time without the
LLM (time inside the add's own LLM requests, concurrent ones merged, is subtracted; the server is
local anyway). The rolling summary runs as configured by default: in the background, overlapping the
next add (its requests are counted with the add during which they were sent; its LLM time is not
subtracted from any add). A first replay on a scope of its own warms caches and query plans and is
not reported; ``--replays`` more are, each on a fresh scope, and the own time per add (wall minus
LLM) is summarised as p50 / p95 over all of them.
Beside it, an analytic model of Mem0ᵍ + Mem0's vector pipeline on the same extracted facts,
entities and triples (counted from its code paths, not run here; benchmarks/peers/mem0_compare.py runs the real mem0).

    python -m benchmarks.cost.add_cost --stores embedded neo4j
    python -m benchmarks.cost.add_cost --stores neo4j --population 1000   # on a database holding 1,000 other users
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from benchmarks import common
from benchmarks.cost.add_script import SCRIPT, USER, Step
from graphmem import Memory
from graphmem.embeddings import HashingEmbedder
from graphmem.testing import ScriptedLLMServer

STAGE_OF_TOOL = {"extract_facts": "facts", "extract_entities": "graph", "establish_relationships": "graph",
                 "delete_graph_memory": "invalidation", "update_memory": "memory_update", "summarize": "summary"}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m benchmarks.cost.add_cost", description=__doc__.split("\n\n")[0])
    p.add_argument("--stores", nargs="+", default=["embedded", "neo4j"], choices=["embedded", "neo4j"])
    p.add_argument("--embedder", choices=["minilm", "hashing"], default="minilm")
    p.add_argument("--model-dir", default=str(common.DEFAULT_MODEL_DIR))
    p.add_argument("--neo4j-url", default=None, help="use this Neo4j instead of starting a private one")
    p.add_argument("--bolt-port", type=int, default=7690)
    p.add_argument("--http-port", type=int, default=7477)
    p.add_argument("--replays", type=int, default=3, help="measured replays of the conversation (after one warm-up)")
    p.add_argument("--population", type=int, default=0,
                   help="synthetic users (100 entities, their relations, 20 memories each) loaded into the Neo4j store "
                        "first and removed after, so the adds run on a database of that size")
    p.add_argument("--no-context", action="store_true", help="context.recent_messages = summary_every = 0 (prompt tokens without conversation context)")
    p.add_argument("--out", default=None)
    return p.parse_args(argv)


class ScriptedModel:
    """The handler of the scripted server: the current step's replies, by tool."""

    def __init__(self) -> None:
        self.step: Step = SCRIPT[0]
        self.replies: list[tuple[str, str]] = []  # (tool, arguments JSON) in the order sent
        self._lock = threading.Lock()

    def __call__(self, tool: str | None, body: dict) -> dict | None:
        reply = self.reply(tool, body)
        if reply is not None:
            with self._lock:
                self.replies.append((tool or "", json.dumps(reply)))
        return reply

    def reply(self, tool: str | None, body: dict) -> dict | None:
        s = self.step
        prompt = "\n".join(str(m.get("content", "")) for m in body.get("messages", []))
        if tool == "extract_facts":
            return {"facts": s.facts}
        if tool == "extract_entities":
            return {"entities": [{"entity": n, "entity_type": t} for n, t in s.entities]}
        if tool == "establish_relationships":
            return {"relations": [{"source": a, "relationship": r, "destination": b} for a, r, b in s.relations]}
        if tool == "delete_graph_memory":
            shown = {line.strip().casefold() for line in prompt.splitlines()}
            return {"relations": [{"source": a, "relationship": r, "destination": b} for a, r, b in s.retire
                                  if f"- {a} -- {r} -- {b}".casefold() in shown]}
        if tool == "update_memory":
            return {"memory": self.memory_events(prompt)}
        if tool == "summarize":
            return {"summary": "Maya, a nurse, talks about her life, moves and pets."}
        return None

    def memory_events(self, prompt: str) -> list[dict[str, str]]:
        match = re.search(r"Existing memories:\n(.*?)\n\nNew facts:\n(.*)\Z", prompt, re.S)
        existing = json.loads(match.group(1)) if match else []
        events, used = [], set()
        for mem in existing:
            new = next((v for k, v in self.step.updates.items() if k.casefold() in mem["text"].casefold()), None)
            if new is not None and new not in used:
                events.append({"id": mem["id"], "text": new, "event": "UPDATE", "old_memory": mem["text"]})
                used.add(new)
            elif any(k.casefold() in mem["text"].casefold() for k in self.step.deletes):
                events.append({"id": mem["id"], "text": mem["text"], "event": "DELETE"})
            else:
                events.append({"id": mem["id"], "text": mem["text"], "event": "NONE"})
        events += [{"id": str(len(existing) + i), "text": f, "event": "ADD"} for i, f in enumerate(self.step.facts) if f not in used]
        return events


class LLMClock:
    """Wraps the LLM's call_tools to record each request's interval (to subtract LLM time); the
    background summary's requests (thread graphmem-summary) are not an add's and are left out."""

    def __init__(self, llm: Any) -> None:
        self.intervals: list[tuple[float, float]] = []
        inner = llm.call_tools

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                if not threading.current_thread().name.startswith("graphmem-summary"):
                    self.intervals.append((started, time.perf_counter()))

        llm.call_tools = timed

    def busy(self, since: float, until: float) -> float:
        """Seconds of [since, until] covered by LLM requests (overlapping ones counted once)."""
        total, end = 0.0, since
        for a, b in sorted(i for i in self.intervals if i[1] > since and i[0] < until):
            a, b = max(a, end), min(b, until)
            if b > a:
                total, end = total + b - a, b
        return total


def prompt_tokens(enc: Any, body: dict) -> int:
    messages = body.get("messages") or []
    content = sum(len(enc.encode(str(m.get("content") or ""))) + 3 for m in messages) + 3
    return content + len(enc.encode(json.dumps(body.get("tools") or [])))


def mem0_model(step: Step, result: dict[str, Any]) -> dict[str, int]:
    """Mem0ᵍ + Mem0's vector pipeline on the same extraction, counted from its published code paths:
    LLM: facts, memory update, entities, relations, deletions (5, every add). Embeddings: one per
    fact (vector search), one per entity (graph search), two per triple (source and destination
    node search). Graph DB: one search query per entity, per triple two node-match queries and one
    MERGE, one DELETE per retired triple. Vector store: one search per fact, one write per memory event."""
    triples = len(step.relations)
    entities = len({n.casefold() for n, _ in step.entities})
    retired = sum(1 for r in result.get("relations", []) if r.get("event") == "INVALIDATE")
    events = sum(1 for r in result.get("results", []) if r.get("event") in ("ADD", "UPDATE", "DELETE"))
    return {"llm_calls": 5, "embedding_calls": len(step.facts) + entities + 2 * triples,
            "graph_round_trips": entities + 3 * triples + retired, "vector_round_trips": len(step.facts) + events}


def open_store(kind: str, args: argparse.Namespace, dims: int, workdir: Path) -> tuple[Any, str | None, Any]:
    """The store, the Neo4j server's version, and the private Neo4j started for it (stop it after)."""
    if kind == "embedded":
        from graphmem.stores.embedded import EmbeddedStore

        return EmbeddedStore(workdir / "embedded", embedding_dims=dims), None, None
    from graphmem.stores.neo4j import Neo4jStore

    private = None if args.neo4j_url else common.PrivateNeo4j(args.bolt_port, args.http_port, None)
    url = args.neo4j_url or private.uri
    return Neo4jStore(url=url, embedding_dims=dims), common.neo4j_server_version(url), private


def run_store(kind: str, args: argparse.Namespace, enc: Any, workdir: Path) -> dict[str, Any]:
    embedder = common.load_minilm(args.model_dir) if args.embedder == "minilm" else HashingEmbedder(dims=384)
    count_inputs(embedder)
    store, server_version, private = open_store(kind, args, embedder.dims, workdir)
    population = None
    if kind == "neo4j" and args.population:
        # On a nearly empty database each replay's entities (created, then deleted) swing the counts the
        # planner keeps by 10% and more: Neo4j re-plans the add's statements (0.5-1 s each) every 10 s.
        # A population makes a replay a small part of the database, as in a store serving many users.
        from benchmarks.peers.mem0_compare import load_population

        population = load_population(store.url, args.population, ("graphmem",))
        print(f"population: {population}", file=sys.stderr)
    model = ScriptedModel()
    with ScriptedLLMServer() as server:
        server.set_handler(model)
        config = {"llm": {"provider": "openai_compatible", "config": {"base_url": server.base_url, "api_key": "scripted", "model": "scripted"}},
                  "history_db_path": str(workdir / f"history-{kind}.db")}
        if args.no_context:
            config["context"] = {"recent_messages": 0, "summary_every": 0}
        memory = Memory(config, store=store, embedder=embedder)
        clock = LLMClock(memory.llm)
        try:
            # warm-up replay on a scope of its own: query plans compiled, caches and JIT warm
            replay(memory, server, model, clock, embedder, f"{USER}-warmup-{int(time.time())}", enc)
            adds = []
            for r in range(args.replays):
                adds += replay(memory, server, model, clock, embedder, f"{USER}-{r}-{int(time.time())}", enc)
        finally:
            memory.close()
            if population is not None:
                from benchmarks.peers.mem0_compare import drop_population

                drop_population(store.url)
            if private is not None:
                private.stop()
    return {"store": kind, "neo4j_server": server_version, "embedder": embedder.name, "population": population, "adds": adds,
            "own_time": own_time(adds)}


def count_inputs(embedder: Any) -> None:
    """``embedder.inputs``: the texts embedded so far (entity names, facts, relation facts, queries)."""
    embed = embedder.embed
    embedder.inputs = 0

    def counted(texts: list[str]) -> Any:
        embedder.inputs += len(texts)
        return embed(texts)

    embedder.embed = counted


def replay(memory: Memory, server: ScriptedLLMServer, model: ScriptedModel, clock: LLMClock, embedder: Any,
           user_id: str, enc: Any) -> list[dict[str, Any]]:
    adds = []
    try:
        for step in SCRIPT:
            model.step = step
            seen, replies, calls, trips = len(server.requests), len(model.replies), embedder.calls, memory.store.round_trips
            inputs = embedder.inputs
            started = time.perf_counter()
            result = memory.add(step.text, user_id=user_id, timestamp=step.at)
            ended = time.perf_counter()
            adds.append(measure_add(step, result, server.requests[seen:], model.replies[replies:], enc, {
                "embedding_calls": embedder.calls - calls, "embedding_inputs": embedder.inputs - inputs,
                "round_trips": memory.store.round_trips - trips,
                "wall_ms": round((ended - started) * 1000, 1), "llm_ms": round(clock.busy(started, ended) * 1000, 1)}))
    finally:
        memory.flush()  # the last background summary, before the scope goes
        memory.delete_all(user_id=user_id)
    return adds


def measure_add(step: Step, result: dict[str, Any], requests: list[Any], replies: list[tuple[str, str]], enc: Any,
                counters: dict[str, Any]) -> dict[str, Any]:
    stages: dict[str, Counter] = defaultdict(Counter)
    for req in requests:
        stage = STAGE_OF_TOOL.get(req.tool or "", req.tool or "?")
        stages[stage]["calls"] += 1
        stages[stage]["prompt_tokens"] += prompt_tokens(enc, req.body)
    for tool, arguments in replies:
        stages[STAGE_OF_TOOL.get(tool, tool)]["completion_tokens"] += len(enc.encode(arguments))
    events = Counter(r.get("event") for r in result.get("results", []))
    events.update(r.get("event") for r in result.get("relations", []))
    return {"text": step.text, "facts": len(step.facts), "entities": len(step.entities), "triples": len(step.relations),
            "llm_calls": len(requests), **counters, "wall_minus_llm_ms": round(counters["wall_ms"] - counters["llm_ms"], 1),
            "events": dict(events), "stages": {k: dict(v) for k, v in stages.items()}, "mem0_model": mem0_model(step, result)}


def print_tables(runs: list[dict[str, Any]]) -> None:
    for run in runs:
        print(f"\n{run['store']} store ({run['embedder']}), per add: graphmem measured, Mem0 counted from the same extraction")
        rows, sums = [], Counter()
        for i, a in enumerate(run["adds"], start=1):  # every replay's adds, one after the other
            m = a["mem0_model"]
            tokens = [sum(s.get(k, 0) for s in a["stages"].values()) for k in ("prompt_tokens", "completion_tokens")]
            row = [a["triples"], a["entities"], a["llm_calls"], m["llm_calls"], a["embedding_calls"], m["embedding_calls"],
                   a["round_trips"], m["graph_round_trips"] + m["vector_round_trips"], *tokens]
            sums.update(dict(enumerate(row)))
            if i <= len(SCRIPT):  # the first measured replay's adds; the mean row covers every replay
                rows.append([i, a["text"][:34], *row, a["wall_minus_llm_ms"]])
        n = len(run["adds"])
        walls = sorted(a["wall_minus_llm_ms"] for a in run["adds"])
        rows.append(["mean", "", *(round(sums[j] / n, 2) for j in range(10)), walls[n // 2]])
        print(common.table(["#", "message", "triples", "entities", "LLM", "Mem0 LLM", "embed", "Mem0 embed",
                            "DB trips", "Mem0 DB trips", "prompt tok", "compl tok", "ms w/o LLM"], rows))
        print("(mean row: ms w/o LLM is the median)")
        own = own_time(run["adds"])
        print(f"own time per add (wall minus the add's LLM time), {own['adds']} adds over {own['replays']} replays: "
              f"p50 {own['p50']} ms, p95 {own['p95']} ms, max {own['max']} ms; round trips per add p50 {own['round_trips_p50']}; "
              f"embedding inputs per add mean {own['embedding_inputs_mean']}")
        totals: dict[str, Counter] = defaultdict(Counter)
        for a in run["adds"]:
            for stage, c in a["stages"].items():
                totals[stage].update(c)
        print(common.table(["stage", "calls", "calls/add", "prompt tok/call", "completion tok/call"],
                           [[s, c["calls"], round(c["calls"] / n, 2), round(c["prompt_tokens"] / max(c["calls"], 1)),
                             round(c["completion_tokens"] / max(c["calls"], 1))] for s, c in totals.items()]))


def own_time(adds: list[dict[str, Any]]) -> dict[str, Any]:
    own = [a["wall_minus_llm_ms"] for a in adds]
    pct = common.percentiles(own, (50, 95))
    return {"adds": len(adds), "replays": len(adds) // len(SCRIPT), "p50": pct["p50"], "p95": pct["p95"], "max": max(own),
            "round_trips_p50": statistics.median(a["round_trips"] for a in adds),
            "embedding_inputs_mean": round(statistics.mean(a.get("embedding_inputs", 0) for a in adds), 2)}


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    enc = common.o200k_encoding()
    runs = []
    with tempfile.TemporaryDirectory(prefix="graphmem-addcost-") as tmp:
        for kind in args.stores:
            runs.append(run_store(kind, args, enc, Path(tmp)))
    print_tables(runs)
    server = next((r["neo4j_server"] for r in runs if r["neo4j_server"]), None)
    path = common.write_result("add_cost", {
        "machine": common.machine_info(server), "versions": common.package_versions(),
        "parameters": {**{k: v for k, v in vars(args).items() if k != "out"}, "messages": len(SCRIPT), "seed": None,
                       "tokenizer": "tiktoken o200k_base", "llm": "graphmem.testing.ScriptedLLMServer (local HTTP)"},
        "runs": runs}, args.out)
    print(f"\nwritten {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
