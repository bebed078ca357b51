"""Issue 31, item 3: BEAM's long messages made BM25 and MMR most of a search's time. BM25 counts
document frequencies for the query's terms only and reuses each text's token counts; MMR reuses
each text's word set. These tests pin that the faster forms rank exactly as the textbook ones."""

from __future__ import annotations

import math
from collections import Counter

import pytest

from graphmem.retrieval.coverage import _jaccard, mmr
from graphmem.retrieval.text import BM25, term_counts, tokenize

DOCS = [
    "The deploy script fails when the Redis cache is cold; warm it with the seeding job first.",
    "Use pytest fixtures for the database session and roll back after each test.",
    "The cache key includes the user id and the locale, so a cold cache is per locale.",
    "Lunch plans: the new ramen place near the office, Thursday at noon.",
    "",
    "cache cache cache cache cache cache cache cache",
]


def _reference(docs: list[str], query: str, k1: float = 1.2, b: float = 0.75) -> list[float]:
    """Okapi BM25 as written in the textbook: idf over every term, then the query's terms summed."""
    counts = [Counter(tokenize(d)) for d in docs]
    lengths = [sum(c.values()) for c in counts]
    avg = sum(lengths) / len(lengths)
    df: Counter[str] = Counter()
    for c in counts:
        df.update(c.keys())
    idf = {t: math.log(1 + (len(docs) - f + 0.5) / (f + 0.5)) for t, f in df.items()}
    out = []
    for c, length in zip(counts, lengths, strict=True):
        s = 0.0
        for t in set(tokenize(query)):
            if c.get(t):
                s += idf[t] * c[t] * (k1 + 1) / (c[t] + k1 * (1 - b + b * length / (avg or 1.0)))
        out.append(s)
    return out


@pytest.mark.parametrize("b", [0.0, 0.5, 0.75])
@pytest.mark.parametrize("query", ["why is the cache cold after a deploy?", "ramen Thursday", "nothing matches zzz", ""])
def test_bm25_scores_as_the_textbook_formula(query: str, b: float) -> None:
    assert BM25(DOCS, b=b).scores(query) == pytest.approx(_reference(DOCS, query, b=b))


def test_bm25_idf_counts_only_documents_holding_the_term() -> None:
    bm25 = BM25(DOCS)
    assert bm25.idf("cache") == pytest.approx(math.log(1 + (6 - 3 + 0.5) / (3 + 0.5)))
    assert bm25.idf("ramen") > bm25.idf("cache")  # rarer word, more weight


def test_token_counts_and_word_sets_are_cached_and_left_intact() -> None:
    text = "The cache is cold; warm the cache."
    first = term_counts(text)
    assert first is term_counts(text) and first == Counter(tokenize(text))
    BM25([text, "other words"]).scores("cache")
    assert term_counts(text) == Counter(tokenize(text))  # scoring never mutates the shared counts


def test_jaccard_from_the_intersection_alone() -> None:
    a, b = frozenset("abcd"), frozenset("cdef")
    assert _jaccard(a, b) == pytest.approx(2 / 6) == _jaccard(b, a)
    assert _jaccard(frozenset(), frozenset()) == 0.0
    # MMR over cached word sets still lets the different text pass the near copy
    ids = ["1", "2", "3"]
    texts = ["the cache is cold", "the cache is cold again", "ramen on thursday"]
    assert mmr(ids, [1.0, 0.95, 0.9], texts, limit=2, diversity=0.5) == ["1", "3", "2"]
