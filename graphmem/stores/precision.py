"""The precision of the embedder that built a store (fp32, int8: embeddings/quantize.py).

A store's vectors must all come from one embedder: the dimension check catches another model of
another size, this record the same model at another precision (an fp32 store searched with int8
query vectors ranks slightly wrong and says nothing). A store without a record was built at fp32
(before int8 existed). The first embedder to write an empty store sets it; a store with vectors
refuses another precision. Each store keeps the record its own way (embedded: a file beside the
journal; Neo4j: one node, cypher/embedder_precision.cypher).
"""

from __future__ import annotations

import re

from graphmem.errors import ConfigError

#: what a store without a record was built with
UNRECORDED = "fp32"
_NOT_THE = ", not the "
_MISMATCH = re.compile(r" holds (\w+) embeddings" + re.escape(_NOT_THE) + r"\w+ of the configured embedder")


def settle(where: str, built: str | None, wanted: str | None, holds_vectors: bool) -> bool:
    """True when the store should record ``wanted``; ConfigError when its vectors were made at
    another precision. ``wanted`` None: the caller does not embed (export), nothing checked."""
    built = built or UNRECORDED
    if wanted is None or built == wanted:
        return False
    if holds_vectors:
        raise ConfigError(
            f"graph store {where} holds {built} embeddings{_NOT_THE}{wanted} of the configured embedder: "
            "a store keeps the embedder it was built with (its precision too). Configure the embedder's "
            f"precision {built!r}, or give this embedder its own store (graph_store.config)")
    return True


def built_in(message: str) -> str | None:
    """The store's precision named by settle's refusal in ``message``; None for any other error
    (graphmem doctor's fix line)."""
    found = _MISMATCH.search(message)
    return found.group(1) if found else None
