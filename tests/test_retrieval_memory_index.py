"""Issue 31, latency: the embedded store's memory index (BM25 from per-token posting arrays, the
live/filter mask kept per filter, cosines in one-core products), the pool's BM25 term by term and
MMR's lazy comparisons are faster forms of plain per-row formulas. These tests pin that they give exactly the same numbers, hence
the same rankings, as the plain forms, through appends, soft deletes, expiring memories and filters."""

from __future__ import annotations

import math
import random
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from helpers import llm_config

from graphmem import Memory
from graphmem.embeddings.hashing import HashingEmbedder
from graphmem.retrieval.coverage import _jaccard, mmr
from graphmem.retrieval.text import BM25, _light_stem, _tokens, term_counts, tokenize
from graphmem.schema.filters import parse
from graphmem.stores.embedded import EmbeddedStore, memory_index
from graphmem.stores.embedded.memories import MemoryFacts, eligible, matches, visible
from graphmem.stores.embedded.memory_index import K1, B, tokens
from graphmem.testing import ScriptedLLMServer

WORDS = ("cache deploy redis cold warm pytest fixture session database rollback ramen thursday lunch "
         "office locale user's e.g 3.5 Caroline's the a of and is migration schema index vector").split()
START = datetime(2026, 1, 1, tzinfo=UTC)


def _text(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 40)))


def _row(rng: random.Random, n: int, scope: str = "s") -> dict[str, object]:
    at = START + timedelta(minutes=n)
    expires = None if n % 7 else (START - timedelta(days=1) if n % 14 == 0 else START + timedelta(days=3650))
    return {
        "id": f"m{n}", "text": _text(rng), "hash": str(n), "embedding": rng_vector(rng), "metadata": {"k": n % 3, "flag": n % 2 == 0},
        "role": "user" if n % 2 else "assistant", "scope": scope, "user_id": "u", "agent_id": None, "run_id": f"r{n % 2}",
        "created_at": at, "updated_at": at, "deleted_at": None, "_seq": n, "expires_at": expires,
    }  # fmt: skip


def rng_vector(rng: random.Random) -> list[float]:
    return [rng.uniform(-1, 1) for _ in range(8)]


def _plain_bm25(rows: list[dict[str, object]], text: str) -> np.ndarray:
    """Lucene's BM25 written row by row (a query word counted per occurrence, as Lucene's query
    parser makes one clause per word)."""
    counts = [Counter(tokens(str(r["text"]))) for r in rows]
    lengths = [sum(c.values()) for c in counts]
    avg = (sum(lengths) / len(rows) if rows else 0.0) or 1.0
    scores = np.zeros(len(rows))
    for token, repeats in Counter(tokens(text)).items():
        holding = [i for i, c in enumerate(counts) if token in c]
        if not holding:
            continue
        idf = math.log(1.0 + (len(rows) - len(holding) + 0.5) / (len(holding) + 0.5))
        for i in holding:
            tf = counts[i][token]
            scores[i] += repeats * (idf * tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * lengths[i] / avg)))
    return scores


FILTERS = [None, {"metadata.k": 1}, {"metadata.k": True}, {"metadata.flag": True}, {"run_id": "r1"}, {"memory": {"contains": "cache"}}]


def test_index_bm25_and_live_mask_equal_the_per_row_formulas_through_writes():
    rng = random.Random(31)
    facts = MemoryFacts(embedding_dims=8)
    queries = ["why is the redis cache cold after a deploy? the cache", "cache cache redis", "Caroline's lunch on thursday", "e.g 3.5", "zzz nothing", ""]
    n = 0
    for step in range(6):
        for _ in range(rng.randint(5, 25)):  # appended to a live index from the second step on
            facts.create(_row(rng, n))
            n += 1
        live = [i for i in facts.by_scope["s"] if facts.rows[i]["deleted_at"] is None]
        for memory_id in rng.sample(live, 2):
            facts.soft_delete(memory_id, START + timedelta(minutes=step))
        index = facts.index("s")
        rows = facts.scope_rows("s")
        assert [r["id"] for r in index.rows] == [r["id"] for r in rows]
        for q in queries:
            assert index.bm25(q).tolist() == _plain_bm25(rows, q).tolist()  # the same floats, not approximately
        for spec in FILTERS:
            flt = parse(spec)
            for _ in range(2):  # the second read comes from the kept mask
                want = [visible(r, None) and matches(r, flt) for r in rows]
                assert eligible(index, None, None, flt).tolist() == want, spec
            as_of = START + timedelta(minutes=n // 2)
            want = [visible(r, as_of, None) and matches(r, flt) for r in rows]
            assert eligible(index, as_of, None, flt).tolist() == want
    assert any(r["expires_at"] is not None and r["expires_at"] < START for r in rows)  # the clock check ran
    assert not eligible(facts.index("s"), None, None, parse({"metadata.k": True})).any()  # True is not 1


@pytest.mark.parametrize("size", [8, 64, 100, 1 << 18])
def test_cosines_in_one_core_products_equal_the_plain_dot_products(monkeypatch, size):
    """The cosines come in products of at most PRODUCT_SIZE numbers (8 dims: 1, 8, 12 rows or all
    at once); every cosine is the row's dot product with the query (to the last bits a sum of 8
    products can differ in), for one query and several, across appends that grow the buffer."""
    monkeypatch.setattr(memory_index, "PRODUCT_SIZE", size)
    rng = random.Random(size)
    facts = MemoryFacts(embedding_dims=8)
    queries = np.array([rng_vector(rng) for _ in range(3)])
    assert facts.index("s").cosines(queries).shape == (3, 0)  # an empty scope
    for n in range(70):
        facts.create(_row(rng, n))
        if n in (0, 7, 8, 9, 33, 69):
            index = facts.index("s")
            plain = np.array([[sum(a * b for a, b in zip(q, row["embedding"], strict=True)) for row in index.rows] for q in queries])
            got = index.cosines(queries)
            assert got.shape == (3, n + 1)
            assert np.allclose(got, plain, rtol=0, atol=1e-12)
            assert np.array_equal(index.cosines(queries[:1])[0], index.cosines(queries[:1])[0])  # stable between reads


def _plain_bm25_pool(docs: list[str], query: str, k1: float = 1.2, b: float = 0.75) -> list[float]:
    """The pool's BM25 written document by document (a query word counted once)."""
    counts = [Counter(tokenize(d)) for d in docs]
    lengths = [sum(c.values()) for c in counts]
    avg = (sum(lengths) / len(lengths)) if lengths else 0.0
    terms = [t for t in dict.fromkeys(tokenize(query)) if any(t in c for c in counts)]
    out = []
    for c, length in zip(counts, lengths, strict=True):
        score = 0.0
        for t in terms:
            if c[t]:
                f = sum(1 for other in counts if t in other)
                idf = math.log(1 + (len(counts) - f + 0.5) / (f + 0.5))
                score += idf * c[t] * (k1 + 1) / (c[t] + k1 * (1 - b + b * length / (avg or 1.0)))
        out.append(score)
    return out


@pytest.mark.parametrize("seed", range(4))
def test_pool_bm25_term_by_term_equals_the_per_document_sum(seed):
    rng = random.Random(seed)
    docs = [_text(rng) for _ in range(rng.randint(1, 40))] + [""]
    for query in ("why is the redis cache cold after a deploy? the cache", "cache cache redis", "zzz nothing", "",
                  " ".join(rng.choice(WORDS) for _ in range(12))):
        for b in (0.0, 0.5, 0.75, 1.0):
            assert BM25(docs, b=b).scores(query) == _plain_bm25_pool(docs, query, b=b)  # the same floats
    assert BM25([]).scores("cache") == []


def _plain_mmr(ids: list[str], scores: list[float], texts: list[str], limit: int, diversity: float) -> list[str]:
    """MMR with a Python set Jaccard for every candidate left after every pick."""
    best = max(scores, default=0.0)
    if diversity <= 0 or best <= 0 or len(ids) < 2:
        return list(ids)
    words = [frozenset(tokenize(t)) for t in texts]
    left, picked, closest = list(range(len(ids))), [], [0.0] * len(ids)
    while left and len(picked) < limit:
        i = max(left, key=lambda j: (1 - diversity) * scores[j] / best - diversity * closest[j])  # ties: the first
        picked.append(i)
        left.remove(i)
        for j in left:
            closest[j] = max(closest[j], _jaccard(words[i], words[j]))
    return [ids[i] for i in picked] + [ids[i] for i in left]


@pytest.mark.parametrize("seed", range(8))
def test_lazy_mmr_picks_as_comparing_every_candidate_with_every_pick(seed):
    """coverage.mmr compares a candidate with the picks only while its relevance can still win the
    pick: the same order as the plain form, with tied scores, repeated texts (tied overlaps), empty
    texts, every limit and several diversities."""
    rng = random.Random(seed)
    texts = [_text(rng) for _ in range(rng.randint(2, 60))] + ["", ""]
    texts += [rng.choice(texts) for _ in range(5)]  # near copies: equal overlaps
    ids = [str(i) for i in range(len(texts))]
    scores = sorted((round(rng.random(), 1) for _ in texts), reverse=True)  # many ties
    for diversity in (0.1, 0.3, 0.5, 0.7, 1.0):
        for limit in (1, 2, 5, 10, 25, len(texts) + 3):
            assert mmr(ids, scores, texts, limit, diversity) == _plain_mmr(ids, scores, texts, limit, diversity)
    unsorted = [rng.random() for _ in texts]  # the order given is kept for the rest, whatever the scores
    assert mmr(ids, unsorted, texts, 10, 0.3) == _plain_mmr(ids, unsorted, texts, 10, 0.3)
    assert mmr(ids, [0.0] * len(ids), texts, 10, 0.3) == ids and mmr(ids[:1], [1.0], texts[:1], 10, 0.3) == ids[:1]


def test_cached_stems_tokenise_as_the_plain_stemmer():
    text = "Playing plays played boxes wishes class classes the ÉCOLE écoles snake_case camelCaseWords"
    _tokens.cache_clear()
    assert list(_tokens(text)) == [
        _light_stem(t) for t in ["playing", "plays", "played", "boxes", "wishes", "class", "classes", "ecole", "ecoles",
                                 "snake", "case", "camel", "case", "words"]]  # fmt: skip


def test_a_document_in_parts_scores_as_the_joined_text():
    rng = random.Random(7)
    joined, parts = [], []
    for _ in range(30):
        text, dates = _text(rng), rng.choice(["", "2023 May 7 Sunday", "yesterday 2024"])
        joined.append(f"{text} {dates}" if dates else text)
        parts.append((text, dates) if dates else text)
    for query in ("cache on May 7", "redis 2024 deploy", "nothing zzz"):
        assert BM25(parts, b=0.5).scores(query) == BM25(joined, b=0.5).scores(query)


def test_a_new_scope_is_indexed_as_it_is_written_and_an_opened_store_indexes_nothing(tmp_path):
    rng = random.Random(3)
    facts = MemoryFacts(embedding_dims=8)
    facts.create(_row(rng, 0))
    assert "s" not in facts._indexes  # loading (eager off): built at the first search
    facts.eager = True
    facts.create(_row(rng, 1, scope="t"))
    assert [r["id"] for r in facts._indexes["t"].rows] == ["m1"]
    facts.create(_row(rng, 2))  # an existing scope without an index stays lazy
    assert "s" not in facts._indexes
    store = EmbeddedStore(tmp_path / "s", embedding_dims=8)
    assert store._graph.memories.eager
    store.close()


@pytest.mark.parametrize("infer_false_batch", [True, False])
def test_written_texts_are_counted_for_the_search_at_write_time(tmp_path, infer_false_batch):
    """Ingest counts a written memory's words (BM25's and MMR's) after the write commits (either
    store; the store itself imports no retrieval code): the search finds them cached."""
    texts = [f"a long message about the cache, written once {uuid.uuid4().hex}" for _ in range(3)]
    with ScriptedLLMServer() as server:
        memory = Memory({"llm": llm_config(server), "history_db_path": str(tmp_path / "h.db"), "context": {"summary_every": 0}},
                        store=EmbeddedStore(tmp_path / "store", embedding_dims=64), embedder=HashingEmbedder(dims=64))
        try:
            before = term_counts.cache_info().misses
            if infer_false_batch:
                memory.add_many([{"messages": [{"role": "user", "content": t}], "user_id": "u"} for t in texts], infer=False)
            else:
                for t in texts:
                    memory.add([{"role": "user", "content": t}], user_id="u", infer=False)
            after = term_counts.cache_info().misses
            assert after == before + 3
            for t in texts:  # what the search's BM25 and MMR ask for these memories: cached
                term_counts(t)
            assert term_counts.cache_info().misses == after
            assert sorted(r["memory"] for r in memory.search("cache", user_id="u", limit=3)["results"]) == sorted(texts)
        finally:
            memory.close()
