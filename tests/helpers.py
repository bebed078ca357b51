"""Test helpers: a Memory wired to the scripted LLM server and a given store."""

from __future__ import annotations

from graphmem import Memory
from graphmem.embeddings import HashingEmbedder
from graphmem.testing import ScriptedLLMServer


def llm_config(server: ScriptedLLMServer, **overrides) -> dict:
    settings = {"base_url": server.base_url, "api_key": "test-key", "model": "scripted", "max_retries": 2, "retry_wait": 0.01, "timeout": 3}
    settings.update(overrides)
    return {"provider": "openai_compatible", "config": settings}


def make_memory(server: ScriptedLLMServer, store, dims: int, **config) -> Memory:
    cfg = {"llm": llm_config(server)}
    cfg.update(config)
    return Memory(cfg, store=store, embedder=HashingEmbedder(dims=dims))


def graph(entities=(), relations=(), deletions=None) -> dict:
    """Scripted replies for one add: entities as (name, type), relations as (source, rel, destination[, valid_at[, invalid_at]])."""
    replies = {
        "extract_entities": {"entities": [{"entity": n, "entity_type": t} for n, t in entities]},
        "establish_relationships": {"relations": [_rel(r) for r in relations]},
    }
    if deletions is not None:
        replies["delete_graph_memory"] = {"relations": [{"source": s, "relationship": r, "destination": d} for s, r, d in deletions]}
    return replies


def _rel(r: tuple) -> dict:
    out = {"source": r[0], "relationship": r[1], "destination": r[2]}
    if len(r) > 3 and r[3]:
        out["valid_at"] = r[3]
    if len(r) > 4 and r[4]:
        out["invalid_at"] = r[4]
    return out


def script(server: ScriptedLLMServer, replies: dict) -> None:
    for tool, reply in replies.items():
        server.enqueue(tool, reply)


def triples(result: dict) -> set[tuple[str, str, str]]:
    return {(r["source"], r["relationship"], r["destination"]) for r in result["relations"]}


def lock_round_trips(store) -> int:
    """Round trips an add spends on its scope's write lock: the Neo4j store takes a database lock
    (scope_lock.cypher), the embedded store only an in-process one."""
    return 1 if type(store).__name__ == "Neo4jStore" else 0


def resolve_round_trips(store, parts: int = 3) -> int:
    """Round trips of an add's reads between its log and its write (GraphStore.resolve): one statement
    on Neo4j; the embedded store's default runs its ``parts`` (entity match, relations around, memory
    candidates) one by one."""
    return 1 if type(store).__name__ == "Neo4jStore" else parts


#: A graph answer with unusable items beside one good relation (I knows Kim): a non-string entity, an
#: entity without a name, a bare string; a relation to an entity not extracted, one missing a field,
#: a self loop. Tests of dropping check both what is kept and what is counted.
MALFORMED_GRAPH = {
    "extract_entities": {"entities": [{"entity": "Kim", "entity_type": "person"}, {"entity": 5}, {"type": "x"}, "junk"]},
    "establish_relationships": {"relations": [
        {"source": "I", "relationship": "knows", "destination": "Kim"},
        {"source": "I", "relationship": "knows", "destination": "Ghost"},  # not extracted
        {"source": "Kim", "relationship": "likes"},  # missing field
        {"source": "I", "relationship": "is", "destination": "me"},  # self loop
    ]},
}
