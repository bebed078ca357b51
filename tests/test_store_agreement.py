"""The two stores agree: the contract is fully abstract, and a seeded differential test writes the
same data to the embedded store and to Neo4j and compares what ``Memory.search`` ranks.

Vector scores are the same cosine in both stores; the fulltext signal is computed twice (Lucene in
Neo4j, graphmem's own scorer in the embedded store), so where it takes part the test measures the
agreement and holds it to the documented tolerance (README: Stores agree)."""

from __future__ import annotations

import inspect
import random
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from conftest import TEST_DIMS, make_store

from graphmem import Memory
from graphmem.embeddings import HashingEmbedder
from graphmem.stores.base import EntityCandidate, GraphStore
from graphmem.types import EntityWrite, GraphWrite, MemoryWrite, RelationWrite, Scope, canonical_name, new_id

#: methods with a working default in GraphStore; everything else a store must implement
DEFAULTS = {"close", "ping", "scope_lock", "locked_conversation", "resolve", "add_context", "warm"}


def test_the_store_contract_is_fully_abstract():
    public = {n for n, f in inspect.getmembers(GraphStore, inspect.isfunction) if not n.startswith("_")}
    assert public - DEFAULTS == set(GraphStore.__abstractmethods__)
    for name in GraphStore.__abstractmethods__:
        assert "NotImplementedError" not in inspect.getsource(getattr(GraphStore, name)), name


WORDS = ("tea coffee hiking climbing piano guitar paris denver boston garden cooking running chess novel "
         "sister brother doctor teacher dog cat spring winter museum jazz bakery cycling").split()
PEOPLE = ("Ana", "Ben", "Chloe", "Dev", "Emil", "Fay", "Gus", "Hana", "Ivo", "Jun")
RELATIONS = ("LIKES", "VISITED", "LIVES_IN", "WORKS_WITH", "KNOWS", "PLAYS")
T0 = datetime(2024, 1, 1, tzinfo=timezone.utc)


def seeded_writes(scope: Scope, seed: int = 20261122) -> list[GraphWrite]:
    """Ten adds: entities (people and words), relations between them, memory facts from the words."""
    rng = random.Random(seed)
    emb = HashingEmbedder(dims=TEST_DIMS)
    names = list(PEOPLE) + rng.sample(WORDS, 12)
    ids = {n: new_id() for n in names}
    seen: set[str] = set()
    writes = []
    for step in range(10):
        at = T0 + timedelta(days=step)
        relations, used = [], set()
        for _ in range(4):
            a, b = rng.sample(names, 2)
            rel = RelationWrite(ids[a], rng.choice(RELATIONS), ids[b], at)
            rel.fact = f"{a} {rel.relationship.lower().replace('_', ' ')} {b}"  # as every add now writes one
            rel.fact_embedding = emb.embed_one(rel.fact)
            relations.append(rel)
            used |= {a, b}
        entities = [EntityWrite(ids[n], n, canonical_name(n), "person" if n in PEOPLE else "concept", emb.embed_one(n), n not in seen)
                    for n in sorted(used)]
        seen |= used
        writes.append(GraphWrite(new_id(), scope, at, entities=entities, relations=relations))
        for i in range(6):  # one memory per add: a distinct created_at orders them in storage
            text = f"{rng.choice(PEOPLE)} {' '.join(rng.sample(WORDS, rng.randint(2, 5)))}"
            memory = MemoryWrite("ADD", new_id(), text, emb.embed_one(text), {"step": step}, "user")
            writes.append(GraphWrite(new_id(), scope, at + timedelta(minutes=i + 1), memories=[memory]))
    return writes


def queries(seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    return [f"{rng.choice(PEOPLE)} {' '.join(rng.sample(WORDS, rng.randint(1, 3)))}" for _ in range(12)]


def _memory(store) -> Memory:
    llm = {"provider": "openai_compatible", "config": {"base_url": "http://127.0.0.1:9/v1", "api_key": "unused"}}
    return Memory({"llm": llm}, store=store, embedder=HashingEmbedder(dims=TEST_DIMS))  # search never calls the LLM


def _ranked(result: dict) -> tuple[list[tuple[str, float]], list[tuple[tuple[str, str, str], float]]]:
    memories = [(m["id"], m["score"]) for m in result["results"]]
    relations = [((r["source"], r["relationship"], r["destination"]), r["score"]) for r in result["relations"]]
    return memories, relations


def _same_ranking(a: list, b: list, tolerance: float = 1e-4) -> bool:
    """Same items in the same order, scores equal within ``tolerance``; items whose scores tie may swap."""
    if len(a) != len(b):
        return False
    for (ka, sa), (kb, sb) in zip(a, b, strict=True):
        if abs(sa - sb) > tolerance:
            return False
        if ka != kb and not any(k == ka and abs(s - sb) <= tolerance for k, s in b):
            return False
    return {k for k, _ in a} == {k for k, _ in b}


@pytest.fixture
def both_stores(request, tmp_path):
    stores = [make_store("embedded", request, tmp_path), make_store("neo4j", request, tmp_path)]
    scope = Scope.of(user_id=f"agree-{uuid.uuid4().hex[:8]}")
    writes = seeded_writes(scope)  # the same ids in both stores
    for store in stores:
        for write in writes:
            store.write(write)
    yield scope, stores
    stores[1].delete_all(scope)
    for store in stores:
        store.close()


@pytest.mark.neo4j
def test_both_stores_rank_the_same_seeded_data_alike(both_stores):
    scope, (embedded, neo4j) = both_stores
    mem_e, mem_n = _memory(embedded), _memory(neo4j)
    same_memories: dict[str, list[bool]] = {}
    same_relations: dict[str, list[bool]] = {}
    relation_overlap: dict[str, list[float]] = {}
    for preset in ("vector", "bm25", "hybrid", "hybrid_rrf"):
        for q in queries():
            a = _ranked(mem_e.search(q, user_id=scope.user_id, limit=10, preset=preset))
            b = _ranked(mem_n.search(q, user_id=scope.user_id, limit=10, preset=preset))
            assert a[0] and b[0] and a[1] and b[1], (preset, q)
            same_memories.setdefault(preset, []).append(_same_ranking(a[0], b[0]))
            same_relations.setdefault(preset, []).append(_same_ranking(a[1], b[1]))
            overlap = len({k for k, _ in a[1]} & {k for k, _ in b[1]}) / max(len(a[1]), len(b[1]))
            relation_overlap.setdefault(preset, []).append(overlap)
    rate = {p: sum(v) / len(v) for p, v in same_memories.items()}
    rel_rate = {p: sum(v) / len(v) for p, v in same_relations.items()}
    rel_overlap = {p: sum(v) / len(v) for p, v in relation_overlap.items()}
    print(f"identical memory rankings {rate}; identical relation rankings {rel_rate}; relation top-10 overlap {rel_overlap}")
    # Cosine, and BM25 (computed in Python over the candidates the store returns), are the same in
    # both stores: with them alone, every ranking is the same, scores included (within 1e-4).
    for preset in ("vector", "bm25"):
        assert rate[preset] == 1.0 and rel_rate[preset] == 1.0, preset
    # Memories use the store's fulltext score only to widen the candidate pool: rankings agree.
    assert rate["hybrid"] >= 0.9 and rate["hybrid_rrf"] >= 0.9
    # Relations fuse the entity-name fulltext score, which Lucene computes with the whole index's term
    # statistics (every scope in the database) and the embedded store over the scope: the documented
    # tolerance is the top-10 set, not the order.
    assert rel_overlap["hybrid"] >= 0.8 and rel_overlap["hybrid_rrf"] >= 0.8


def _resolution_ids(found) -> tuple:
    return (
        [m.id if m else None for m in found.matches],
        [(r.source_id, r.relationship, r.destination_id, r.valid_at) for r in found.relations],
        [[m.id for m in hits] for hits in found.similar],
        [m.id for m in found.mentioning],
        list(found.mention_ids),
    )


@pytest.mark.neo4j
def test_neo4j_resolves_in_one_statement_what_the_default_reads_in_three(both_stores):
    """resolve.cypher (one round trip) returns what GraphStore.resolve's default composes from
    match_entities, relations_around and memory_candidates, on Neo4j and in the embedded store."""
    scope, (embedded, neo4j) = both_stores
    emb = HashingEmbedder(dims=TEST_DIMS)
    people = {e.canonical: e.id for e in neo4j.entities(scope) if e.name in PEOPLE}
    for i, name in enumerate(("ana", "ben", "chloe", "ana")):  # memories that MENTION people
        text = f"{name} note {i}"
        write = GraphWrite(new_id(), scope, T0 + timedelta(days=20 + i),
                           memories=[MemoryWrite("ADD", new_id(), text, emb.embed_one(text), None, "user", [people[name]])])
        for store in (embedded, neo4j):
            store.write(write)
    candidates = [EntityCandidate("ana", emb.embed_one("Ana"), mention=True),  # exact match
                  EntityCandidate("ben", emb.embed_one("Ben"), mention=False),  # matched, memories not wanted
                  EntityCandidate("chloe", emb.embed_one("Chloe"), mention=True),
                  EntityCandidate("nobody here", emb.embed_one("nobody here"), mention=True)]  # no match
    facts = [emb.embed_one(q) for q in queries()[:3]]
    before = neo4j.round_trips
    one = neo4j.resolve(scope, candidates, 0.7, facts, 5, 20)
    assert neo4j.round_trips == before + 1
    composed = GraphStore.resolve(neo4j, scope, candidates, 0.7, facts, 5, 20)
    assert _resolution_ids(one) == _resolution_ids(composed)
    assert one.mention_ids == sorted([people["ana"], people["chloe"]]) and len(one.mentioning) == 3
    assert one.matches[3] is None and one.relations and all(len(hits) == 5 for hits in one.similar)
    in_embedded = _resolution_ids(embedded.resolve(scope, candidates, 0.7, facts, 5, 20))
    assert in_embedded == _resolution_ids(one)
    # no candidates: the memory candidates alone (memory_candidates on Neo4j is this statement too)
    similar, mentioning = neo4j.memory_candidates(scope, facts, 5, [people["ben"]], 20)
    assert [[m.id for m in hits] for hits in similar] == _resolution_ids(one)[2]
    assert [m.text for m in mentioning] == ["ben note 1"]
    # no new fact (an add that only retires): the mentioning memories alone, in both stores
    for store in (neo4j, embedded):
        similar, mentioning = store.memory_candidates(scope, [], 5, [people["ana"]], 20)
        assert similar == [] and [m.text for m in mentioning] == ["ana note 3", "ana note 0"]
