"""Word overlap (Jaccard of distinct BM25 tokens) between the texts of a candidate pool, for MMR.

A pool of long messages holds thousands of distinct words; comparing Python sets pick after pick was
most of MMR's time. Here each text's distinct words are a cached array of word numbers, the pool one
0/1 matrix over the words it uses, and a pick's overlap with every other text one matrix-vector
product. The counts are exact integers, so each Jaccard is the same float as
``len(a & b) / len(a | b)``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from functools import lru_cache
from itertools import count
from typing import TYPE_CHECKING

from graphmem.retrieval.text import term_counts
from graphmem.types import GraphWrite

if TYPE_CHECKING:
    import numpy as np

_MAX_WORDS = 1 << 20  # distinct words numbered before the numbering starts again (bounded memory)
#: word -> its number; a new word takes the next one (numbered in C: no Python call per word)
_numbers: defaultdict[str, int] = defaultdict(count().__next__)


@lru_cache(maxsize=16_384)
def word_numbers(text: str) -> np.ndarray:
    """The text's distinct tokens (``tokenize``) as word numbers (read only: shared)."""
    import numpy as np  # here, not at import: importing graphmem loads no numpy (tests/test_startup.py)

    words = term_counts(text)
    out = np.fromiter(map(_numbers.__getitem__, words), dtype=np.int64, count=len(words))
    out.flags.writeable = False
    return out


class WordOverlap:
    """Jaccard between the distinct words of any text of ``texts`` and all of them."""

    def __init__(self, texts: Sequence[str]) -> None:
        import numpy as np

        if len(_numbers) >= _MAX_WORDS:  # between pools only: one pool's numbers never mix two numberings
            _numbers.clear()
            word_numbers.cache_clear()
        words = [word_numbers(t) for t in texts]
        self.sizes = np.array([len(w) for w in words], dtype=np.float64)
        every = np.concatenate(words) if words else np.zeros(0, dtype=np.int64)
        columns = np.unique(every, return_inverse=True)[1]
        self.matrix = np.zeros((len(words), int(columns.max()) + 1 if len(columns) else 0), dtype=np.float32)
        self.matrix[np.repeat(np.arange(len(words)), self.sizes.astype(np.int64)), columns] = 1.0

    def jaccard(self, i: int) -> list[float]:
        """Jaccard of text ``i`` with every text (0 where both are empty)."""
        import numpy as np

        shared = (self.matrix @ self.matrix[i]).astype(np.float64)
        union = self.sizes + self.sizes[i] - shared
        out = np.divide(shared, union, out=np.zeros_like(shared), where=union > 0)
        values: list[float] = out.tolist()
        return values


def analyse_written(writes: Iterable[GraphWrite]) -> None:
    """Count the words of the memories ``writes`` added or changed for the search's BM25 and number
    them for MMR, now: both are cached per text (``term_counts``, ``word_numbers``), so a later search
    seldom tokenises a long message. Called by ingest after a write commits, for either store."""
    for write in writes:
        for m in write.memories:
            if m.event in ("ADD", "UPDATE") and m.text:
                word_numbers(m.text)
