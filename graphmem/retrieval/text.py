"""Tokenisation and BM25 for ranking short texts (relation triples, memory facts)."""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from functools import lru_cache

from graphmem.schema.words import STOPWORDS
from graphmem.types import GraphWrite

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

FIRST_PERSON = frozenset({"i", "me", "my", "mine", "myself", "im", "i'm", "ive", "i've", "id", "i'd", "ill"})


def _light_stem(token: str) -> str:
    """A conservative English suffix strip so "plays", "playing" and "played" meet "play"."""
    for suffix in ("ing", "ed", "es", "s"):
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            stem = token[: -len(suffix)]
            if suffix == "es" and not stem.endswith(("s", "x", "z", "ch", "sh")):
                stem = token[:-1]
            return stem
    return token


def tokenize(text: str) -> list[str]:
    """Lowercased, accent-folded words; snake_case and camelCase split; stopwords dropped; light stemming."""
    return list(_tokens(text))


def _analyse(text: str) -> tuple[str, ...]:
    text = _CAMEL.sub(" ", text)
    if not text.isascii():  # ASCII has nothing to fold: skip the per-character pass
        text = unicodedata.normalize("NFKD", text)
        text = "".join(ch for ch in text if not unicodedata.combining(ch))
    text = text.casefold()
    return tuple([_stem(t) for t in _WORD.findall(text) if t not in STOPWORDS])


#: ``_analyse`` cached: queries and relation texts come back search after search
_tokens = lru_cache(maxsize=65_536)(_analyse)


@lru_cache(maxsize=262_144)
def _stem(word: str) -> str:
    """_light_stem, cached per word: a long message repeats its words, and a scope its vocabulary."""
    return _light_stem(word)


def mentions_self(text: str) -> bool:
    """True when a query speaks in the first person ("what do I like?", "my sister")."""
    words = re.findall(r"[\w']+", text.casefold())
    return any(w in FIRST_PERSON for w in words)


@lru_cache(maxsize=16_384)
def term_counts(text: str) -> Counter[str]:
    """The text's token counts (``tokenize``), cached: search re-scores the same stored texts query
    after query, and a long message's count was most of BM25's time (read only: shared). The
    embedded store counts a memory's text when it indexes it, so a search seldom does."""
    return Counter(_analyse(text))


def analyse_written(writes: Iterable[GraphWrite]) -> None:
    """Count the words of the memories ``writes`` added or changed, now: the counts are cached per
    text (``term_counts``), so a later search's BM25 and MMR seldom tokenise a long message. Called
    by ingest after a write commits, for either store."""
    for write in writes:
        for m in write.memories:
            if m.event in ("ADD", "UPDATE") and m.text:
                term_counts(m.text)


#: a document for BM25: a text, or parts of one (a memory's text and the words of its dates), which
#: count as the parts joined by spaces would, each part's counts cached on its own
Document = str | tuple[str, ...]


def document_counts(doc: Document) -> Counter[str]:
    if isinstance(doc, str):
        return term_counts(doc)
    counts: Counter[str] = Counter()
    for part in doc:
        counts.update(term_counts(part))
    return counts


class BM25:
    """Okapi BM25 over a fixed list of documents (k1 = 1.2, b = 0.75).

    Document frequencies are counted for the query's terms only, when scoring: a pool of long
    messages has thousands of distinct words and a question uses a dozen of them."""

    def __init__(self, documents: Sequence[Document], k1: float = 1.2, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.docs = [document_counts(d) for d in documents]
        self.lengths = [sum(counts.values()) for counts in self.docs]
        self.avg = (sum(self.lengths) / len(self.lengths)) if self.lengths else 0.0

    def idf(self, term: str) -> float:
        return self._idf(sum(1 for doc in self.docs if term in doc))

    def _idf(self, having: int) -> float:
        n = len(self.docs)
        return math.log(1 + (n - having + 0.5) / (having + 0.5))

    def scores(self, query: str) -> list[float]:
        """Each document's score; a query word counts once. Term by term over only the documents
        holding it (a pool's documents hold few of a question's words), each document's terms added
        in query order, so every score is the same float as the per-document sum."""
        out = [0.0] * len(self.docs)
        norms = [self.k1 * (1 - self.b + self.b * length / (self.avg or 1.0)) for length in self.lengths]
        for term in dict.fromkeys(tokenize(query)):
            having = [i for i, doc in enumerate(self.docs) if term in doc]
            if not having:
                continue
            idf = self._idf(len(having))
            for i in having:
                tf = self.docs[i][term]
                out[i] += idf * tf * (self.k1 + 1) / (tf + norms[i])
        return out
