"""The embedded store's search index over the memories of one scope (live or not), oldest first.

Kept beside the memories and updated on write (``append``, ``deleted``), so a search pays only for
what its query touches: one matrix product for every cosine, and BM25 from the postings of the
query's own tokens, each a pair of numpy arrays (rows, term frequencies) made when first read. The
text index is Lucene's formula over lowercase word tokens, like the Neo4j fulltext index, and like
Lucene it counts a word the query repeats once per occurrence (with each word counted once, the
stores' BM25 candidates on BEAM dev shared 0.90 of their top 30; so counted, 0.94).
"""

from __future__ import annotations

import math
import re
from collections import Counter
from typing import Any

import numpy as np

Attrs = dict[str, Any]
#: Lucene's standard tokenizer (Unicode word boundaries, UAX #29) keeps a word joined across an
#: apostrophe or a full stop between letters or digits ("caroline's", "e.g", "3.5"): the same here, so
#: both stores find the same text hits for a question about "Caroline's" things
TOKEN = re.compile(r"\w+(?:['\u2019.]\w+)*")
K1, B = 1.2, 0.75  # BM25, Lucene's defaults
#: numbers per matrix product in ``cosines``. OpenBLAS runs a product over more than about 460,000 of
#: them on every core; on a shared 2-core machine that made the cosines of a 1,300-message scope
#: 4-5x slower (0.3 -> 1.1-1.9 ms, far more under load: the cores wait on each other), and such
#: scopes' searches the slowest of BEAM dev. A search is one request; other requests use the cores.
PRODUCT_SIZE = 1 << 18


def tokens(text: str) -> list[str]:
    """Lowercase word tokens, as a standard fulltext analyzer (no stop words, no stemming) makes them."""
    return TOKEN.findall(text.casefold())


class MemoryIndex:
    """Lookup tables over every memory of one scope; appending is cheap, so a scope that grows one
    add at a time is not re-indexed from scratch."""

    def __init__(self, embedding_dims: int) -> None:
        self.rows: list[Attrs] = []  # the memories; row numbers below index this list
        self.numbers: dict[str, int] = {}  # memory id -> row number
        self.postings: dict[str, dict[int, int]] = {}  # token -> row -> term frequency
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}  # a posting as (rows, tfs), once read
        self._total_length = 0
        self._buffer = np.zeros((16, embedding_dims))  # unit embeddings; grows by doubling
        self._lengths = np.zeros(16)  # tokens per memory
        self._deleted = np.zeros(16, dtype=bool)  # deleted_at is set
        self.expiring: list[int] = []  # rows with an expires_at (checked against the clock per read)
        #: repr(filter) -> rows passing it (memories.matches), for the first len(mask) rows; dropped
        #: when a row's fields change in place (a soft delete sets invalid_at)
        self.masks: dict[str, np.ndarray] = {}

    @property
    def matrix(self) -> np.ndarray:
        return self._buffer[: len(self.rows)]

    @property
    def lengths(self) -> np.ndarray:
        return self._lengths[: len(self.rows)]

    @property
    def deleted(self) -> np.ndarray:
        return self._deleted[: len(self.rows)]

    @property
    def avg_length(self) -> float:
        return (self._total_length / len(self.rows) if self.rows else 0.0) or 1.0

    def append(self, row: Attrs) -> None:
        n = len(self.rows)
        if n == len(self._buffer):
            self._buffer = np.vstack([self._buffer, np.zeros_like(self._buffer)])
            self._lengths = np.concatenate([self._lengths, np.zeros_like(self._lengths)])
            self._deleted = np.concatenate([self._deleted, np.zeros_like(self._deleted)])
        self._buffer[n] = row["embedding"]
        counts = Counter(tokens(row["text"]))
        for token, tf in counts.items():
            self.postings.setdefault(token, {})[n] = tf
            self._arrays.pop(token, None)
        self._lengths[n] = sum(counts.values())
        self._total_length += int(self._lengths[n])
        self._deleted[n] = row["deleted_at"] is not None
        if row.get("expires_at") is not None:
            self.expiring.append(n)
        self.numbers[row["id"]] = n
        self.rows.append(row)

    def changed(self, memory_id: str) -> None:
        """A memory's liveness or times changed in place (soft delete)."""
        n = self.numbers.get(memory_id)
        if n is not None:
            self._deleted[n] = self.rows[n]["deleted_at"] is not None
            self.masks.clear()

    def cosines(self, queries: np.ndarray) -> np.ndarray:
        """Cosine of every memory (columns) to every unit query row, in products of at most
        ``PRODUCT_SIZE`` numbers each (one core: see there)."""
        matrix = self.matrix
        step = max(1, PRODUCT_SIZE // max(1, matrix.shape[1]))
        if len(matrix) <= step:
            whole: np.ndarray = queries @ matrix.T
            return whole
        out = np.empty((len(queries), len(matrix)))
        for start in range(0, len(matrix), step):
            out[:, start : start + step] = queries @ matrix[start : start + step].T
        return out

    def bm25(self, text: str) -> np.ndarray:
        """BM25 of every memory for the query's tokens, a token counted once per occurrence in the
        query as Lucene's query parser does (one clause per word; 0 where nothing matches)."""
        n = len(self.rows)
        scores = np.zeros(n)
        lengths, avg = self.lengths, self.avg_length
        for token, repeats in Counter(tokens(text)).items():
            posting = self._posting(token)
            if posting is None:
                continue
            rows, tf = posting
            idf = math.log(1.0 + (n - len(rows) + 0.5) / (len(rows) + 0.5))
            norm = K1 * (1.0 - B + B * lengths[rows] / avg)
            scores[rows] += repeats * (idf * tf * (K1 + 1.0) / (tf + norm))
        return scores

    def _posting(self, token: str) -> tuple[np.ndarray, np.ndarray] | None:
        arrays = self._arrays.get(token)
        if arrays is None:
            posting = self.postings.get(token)
            if not posting:
                return None
            arrays = self._arrays[token] = (np.fromiter(posting.keys(), dtype=np.int64, count=len(posting)),
                                            np.fromiter(posting.values(), dtype=np.float64, count=len(posting)))
        return arrays
