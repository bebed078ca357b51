"""Hubness: a relation fact that sits close to every question counts less.

In a sentence-embedding space some short facts sit close to almost any question: a user's many
fillers ("alice follows The Daily (podcast)", "alice visited Oslo (city)") come near every
first-person question, and without a correction they outrank the one fact that answers ("whose
badge do I wear at the office?": bge-small put the podcast above "alice employed by Globex
(company)"). Such points are hubs, a known trait of nearest neighbours in many dimensions.

The correction is in the spirit of CSLS (cross-domain similarity local scaling, Conneau et al.
2018): a fact's score is its cosine to the question minus ``weight`` times its hubness. Hubness is
how much closer than an unrelated text the fact sits to generic questions: its mean cosine to
``PROBES`` (fixed questions about nothing in particular, embedded as search queries are) minus the
model's query floor (the cosine of a question and an unrelated text; 0 for MiniLM, 0.34 for
bge-small). A fact no closer to generic questions than an unrelated text keeps its cosine.

The mean cosine to the probes is the cosine to their centre (a dot product is linear), so the whole
correction is one changed query vector and a constant:

    score = f.q - w (f.c - floor) = f.(q - w c) + w floor

Both stores score facts with that vector and constant (GraphQuery.fact_embedding, fact_shift): one
dot product per fact, as before. Nothing is stored per fact, nothing goes stale as a graph grows,
the score is the same on every store, and existing data needs no reindex. The probes are embedded
once per embedder, in the batch of its first search query (search stays one embedding call).

A process's first search would pay for the probes (MiniLM 14 -> 164 ms, bge-small 16 -> 369 ms), so
the centre is also kept on disk, in ``$GRAPHMEM_HOME/cache/hubness/`` (default ``~/.graphmem``),
under the embedder's ``fingerprint()`` (its weight files and settings) and the probes' own text:
a short-lived process (a CLI search) reads it instead. An embedder without a fingerprint (hashing,
an API) is not kept; a cache that cannot be read or written is passed over.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from graphmem.home import graphmem_home

if TYPE_CHECKING:
    from graphmem.embeddings.base import Embedder

#: generic questions that name no topic of their own: what every question has in common. Written
#: once here (never a benchmark's questions); first person mostly, as agents ask for their user
PROBES = (
    "what do I do on weekends?", "who is that?", "what happened last week?", "where is it?", "what do I like?",
    "tell me about my plans", "what should I remember?", "when was that?", "who did I meet?", "what is my favourite one?",
    "how are things going?", "what did we talk about?", "what did she say about it?", "why did he leave?", "how much did it cost?",
    "what's new with me?", "which one is mine?", "what do you know about me?", "is there anything I should know?",
    "what was the name of that place?", "who was there with us?", "what time does it start?", "did I ever try that?",
    "how long have I had it?", "what did I decide?", "what is it called?", "who told me about it?", "how often do I do that?",
    "what's going on with them?", "where did we go?", "what did I buy?", "how old is he?",
)

_CENTRES: weakref.WeakKeyDictionary[Embedder, list[float]] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def query_vectors(embedder: Embedder, query: str) -> tuple[list[float], list[float]]:
    """The search query's embedding and the probes' centre for this embedder, in one embedding call:
    an embedder's first search embeds the probes in the same batch, later ones reuse the centre."""
    centre = _remembered(embedder)
    if centre is None:
        centre = _read_kept(embedder)
        if centre is not None:
            _remember(embedder, centre)
    if centre is not None:
        return embedder.embed_query(query), centre
    vectors = embedder.embed_queries([query, *PROBES])
    centre = mean(vectors[1:])
    _remember(embedder, centre)
    _keep(embedder, centre)
    return vectors[0], centre


def cache_path(embedder: Embedder) -> Path | None:
    """Where this embedder's probe centre is kept on disk; None when it has no fingerprint."""
    try:
        fingerprint = embedder.fingerprint()
    except Exception:  # a custom embedder's hook failing costs the cache, not the search
        return None
    if not fingerprint:
        return None
    key = hashlib.sha256("\x1e".join([fingerprint, *PROBES]).encode()).hexdigest()[:32]
    try:
        home = graphmem_home()
    except RuntimeError:  # no home directory to be found: no cache
        return None
    return home / "cache" / "hubness" / f"{key}.json"


def _read_kept(embedder: Embedder) -> list[float] | None:
    path = cache_path(embedder)
    if path is None:
        return None
    try:
        centre = json.loads(path.read_text(encoding="utf-8"))["centre"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    dims = getattr(embedder, "dims", None)
    if not isinstance(centre, list) or len(centre) != dims or not all(type(v) is float for v in centre):
        return None  # another file's shape: recomputed and written over
    return centre


def _keep(embedder: Embedder, centre: list[float]) -> None:
    """Written whole (a temporary file renamed over): a reader sees the old file or the new one."""
    path = cache_path(embedder)
    if path is None:
        return
    tmp = path.with_name(f"{path.stem}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps({"model": getattr(embedder, "name", ""), "centre": centre}), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        try:
            tmp.unlink(missing_ok=True)
        except OSError:
            pass


def _remembered(embedder: Embedder) -> list[float] | None:
    with _LOCK:
        try:
            return _CENTRES.get(embedder)
        except TypeError:  # an embedder that cannot be weakly referenced or hashed (a custom dataclass)
            return None


def _remember(embedder: Embedder, centre: list[float]) -> None:
    """Kept for the embedder's lifetime; an embedder that cannot be a weak key gets its probes
    embedded with each search (still one call)."""
    with _LOCK:
        try:
            _CENTRES[embedder] = centre
        except TypeError:
            pass


def mean(vectors: Sequence[Sequence[float]]) -> list[float]:
    """The element-wise mean (not normalised: a fact's dot product with it is its mean cosine)."""
    n = len(vectors)
    return [sum(column) / n for column in zip(*vectors, strict=True)]


def fact_query(embedding: Sequence[float], centre: Sequence[float] | None, weight: float, floor: float) -> tuple[list[float] | None, float]:
    """The vector and constant facts are scored with (``score = fact . vector + shift``): the query
    moved ``weight`` of the way away from the probes' centre. (None, 0.0) without a correction (no
    weight, no centre, a centre of other dimensions) or when the moved query would vanish."""
    if not weight or not centre or len(centre) != len(embedding):
        return None, 0.0
    moved = [q - weight * c for q, c in zip(embedding, centre, strict=True)]
    if not any(moved):
        return None, 0.0
    return moved, weight * floor
