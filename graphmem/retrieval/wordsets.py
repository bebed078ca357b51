"""Word overlap (Jaccard of distinct BM25 tokens) between the texts of a candidate pool, for MMR.

A pool of long messages holds thousands of distinct words; comparing Python sets pick after pick was
most of MMR's time. Here the pool is one 0/1 matrix over the words its texts use (numbered per pool,
in C, from each text's cached counts: ``term_counts``), and a pick's overlap with every other text
is one matrix-vector product. The counts are exact integers, so each Jaccard is the same float as
``len(a & b) / len(a | b)``. No state outlives a pool: nothing to bound, nothing shared between
threads.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from itertools import chain, count

from graphmem.retrieval.text import term_counts


class WordOverlap:
    """Jaccard between the distinct words of any text of ``texts`` and all of them."""

    def __init__(self, texts: Sequence[str]) -> None:
        import numpy as np  # here, not at import: importing graphmem loads no numpy (tests/test_startup.py)

        columns: defaultdict[str, int] = defaultdict(count().__next__)  # a new word takes the next column
        counts = [term_counts(t) for t in texts]
        sizes = np.fromiter(map(len, counts), dtype=np.int64, count=len(counts))
        # every text's words in turn, numbered without a Python frame per word (most of the cost)
        every = np.fromiter(map(columns.__getitem__, chain.from_iterable(counts)), dtype=np.int64, count=int(sizes.sum()))
        self.sizes = sizes.astype(np.float64)
        self.matrix = np.zeros((len(counts), len(columns)), dtype=np.float32)
        self.matrix[np.repeat(np.arange(len(counts)), sizes), every] = 1.0

    def jaccard(self, i: int) -> list[float]:
        """Jaccard of text ``i`` with every text (0 where both are empty)."""
        import numpy as np

        shared = (self.matrix @ self.matrix[i]).astype(np.float64)
        union = self.sizes + self.sizes[i] - shared
        out = np.divide(shared, union, out=np.zeros_like(shared), where=union > 0)
        values: list[float] = out.tolist()
        return values
