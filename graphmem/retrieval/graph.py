"""Graph search: relations ranked by what they mean.

The store returns the relations around the query's seeds (entities it names by vector and text, the
scope's own user node for a first-person query) and those whose fact text is close to the query,
each with its signals: ``vector`` (cosine between the query and the relation's own fact
embedding, less the preset's ``relation_hubness`` times the fact's hubness: retrieval.hubness),
``seed`` (how close the relation sits to a seed entity), ``fulltext``. Here:

- ``bm25``: BM25 over each candidate's fact text (a relation found through a path reads the whole
  path: "me HAS_SISTER Jesica HAS_PET dog" answers "my sister's dog");
- ``path`` (``hops=2`` only): how well the path a relation lies on matches the question: the best
  of its hops' fact cosines, given to the path's last relation and to the first hop that leads to
  it, so a question about "Kenji's employer's city" lifts both relations of the answer;
- ``seed`` of a relation *between* two ends the question names (the user's own node for a
  first-person question, any other end whose name's words are all in the question) counts
  ``JOINED_SEEDS`` times: "who is Mei to me?" asks for the relation between the user and Mei, not
  for Mei's own relations, which the question's name also seeds;
- the signals fused by the preset (``relation_weights``, else ``weights``; adaptive fusion anchors
  on ``vector``, the fact cosine, as for memories);
- ``relation_spread``: a soft cap on one kind in the head. Each relation after the first of the
  same source and relationship type keeps ``1 - spread`` of its score per earlier one: a user's 20
  KNOWS relations, all a little like "who is my best friend?", no longer fill the head before the
  one BEST_FRIEND relation; a question that really asks for the KNOWS list still gets them, after
  the kinds that match it better.

No LLM call: a first-person query seeds the scope's user node directly.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from datetime import datetime

from graphmem.retrieval.fusion import LEXICAL, fuse, keep_anchor, relative
from graphmem.retrieval.hubness import fact_query
from graphmem.retrieval.presets import SearchPreset
from graphmem.retrieval.text import mentions_self, tokenize
from graphmem.schema.facts import is_self
from graphmem.schema.filters import Filter
from graphmem.stores.base import GraphQuery, GraphStore
from graphmem.types import Relation, Scope, canonical_name

Triple = tuple[str, str, str]
#: how much more a relation between two ends the question names is seeded than one touching one of them
JOINED_SEEDS = 4.0


def relation_text(rel: Relation) -> str:
    """What BM25 reads: the relation's fact text (the triple in words when it has none), plus, for a
    relation found through a path, the path's triples."""
    fact = rel.fact or f"{rel.source} {rel.relationship} {rel.destination}"
    if not rel.path:
        return fact
    return " ".join([fact, *(f"{s['source']} {s['relationship']} {s['destination']}" for s in rel.path[:-1])])


def search_relations(
    store: GraphStore,
    scope: Scope,
    query: str,
    embedding: list[float],
    preset: SearchPreset,
    limit: int,
    as_of: datetime | None = None,
    known_at: datetime | None = None,
    hops: int = 1,
    filters: Filter | None = None,
    centre: list[float] | None = None,
) -> list[Relation]:
    """The ``limit`` best relations for ``query``; ``centre``: the probes' centre of the embedder
    (retrieval.hubness.query_vectors), for the preset's hubness correction."""
    candidates = store.search_graph(scope, graph_query(scope, query, embedding, preset, as_of, known_at, hops, filters, centre))
    if not candidates:
        return []
    return rank_relations(candidates, query, preset, limit, scope.self_name)


def graph_query(
    scope: Scope, query: str, embedding: list[float], preset: SearchPreset, as_of: datetime | None = None,
    known_at: datetime | None = None, hops: int = 1, filters: Filter | None = None, centre: list[float] | None = None,
) -> GraphQuery:
    """What search asks the store: seeds by vector and text, the user's node for a first-person
    query, and facts scored with the hubness correction when the preset and ``centre`` give one."""
    seeds = [canonical_name(scope.self_name)] if mentions_self(query) else []
    fact_vector, shift = fact_query(embedding, centre, preset.relation_hubness, preset.vector_floor)
    return GraphQuery(embedding=embedding, text=query, seed_canonicals=seeds, top_k=preset.seed_top_k, threshold=preset.seed_threshold,
                      as_of=as_of, known_at=known_at, hops=hops, hop_decay=preset.hop_decay, filters=filters,
                      relation_pool=preset.relation_pool, fact_terms=sorted(set(tokenize(query))),
                      fact_embedding=fact_vector, fact_shift=shift)


def rank_relations(candidates: list[Relation], query: str, preset: SearchPreset, limit: int, self_name: str = "") -> list[Relation]:
    """``candidates`` fused (scores recorded on each), spread over kinds, the ``limit`` best;
    ``self_name``: the scope's own node, which a first-person question names."""
    signals = relation_signals(candidates, query)
    signals["seed"] = joined_seeds(candidates, signals["seed"], query, self_name)
    signals["vector"] = relative(signals["vector"], preset.vector_floor)
    weights = preset.relation_weights or preset.weights
    has_meaning = any(v > 0 for v in signals["vector"])
    if preset.relation_words_need_a_name and has_meaning and not names_an_entity(candidates, query):
        weights = {name: (0.0 if name in LEXICAL else w) for name, w in weights.items()}
    if not has_meaning:  # no fact cosine above the floor (no fact embeddings, a degenerate embedder): the seeds still place them
        weights = {**weights, "seed": max(weights.get("seed", 0.0), 1.0)}
    fused = fuse(signals, weights, preset.fusion, k=preset.rrf_k, selective=preset.selective)
    for i, rel in enumerate(candidates):
        for name in ("bm25", "path"):
            if name in signals:
                rel.scores[name] = signals[name][i]
        rel.score = fused[i]
    ranked = [r for r in candidates if (r.score or 0) > 0]
    ranked.sort(key=lambda r: (-(r.score or 0), _created(r)))
    ranked = spread(ranked, preset.relation_spread)[:limit]
    if not preset.anchor:
        return ranked
    by_id = {r.id: r for r in candidates}
    meaning = sorted(range(len(candidates)), key=lambda i: (-signals["vector"][i], _created(candidates[i])))
    order = keep_anchor([r.id for r in ranked], [candidates[i].id for i in meaning], preset.anchor, limit)
    placed = {r.id for r in ranked}
    for rel_id in order:
        if rel_id not in placed:
            by_id[rel_id].scores["anchored"] = 1.0
    return [by_id[i] for i in order]


def _created(rel: Relation) -> float:
    return rel.created_at.timestamp() if rel.created_at else 0.0


def relation_signals(candidates: Sequence[Relation], query: str) -> dict[str, list[float]]:
    signals = {
        "vector": [r.scores.get("vector", 0.0) for r in candidates],
        "fulltext": [r.scores.get("fulltext", 0.0) for r in candidates],
        "seed": [r.scores.get("seed", 0.0) for r in candidates],
        "bm25": bm25([relation_text(r) for r in candidates], query),
    }
    if any(r.hops > 1 for r in candidates):
        signals["path"] = path_scores(candidates)
    return signals


def joined_seeds(candidates: Sequence[Relation], seeds: list[float], query: str, self_name: str) -> list[float]:
    """``seeds`` with those of the relations between two ends the question names times ``JOINED_SEEDS``."""
    terms = set(tokenize(query))
    first_person = mentions_self(query)

    def named(name: str) -> bool:
        if is_self(name, self_name):
            return first_person
        words = set(tokenize(name))
        return bool(words) and words <= terms

    return [s * JOINED_SEEDS if s and named(r.source) and named(r.destination) else s for r, s in zip(candidates, seeds, strict=True)]


def names_an_entity(candidates: Sequence[Relation], query: str) -> bool:
    """True when the question names an entity among the candidates' ends: every word of its name is
    a word of the question ("where does Kenji work?", "where does alice live?" for the user alice).
    "who is my better half?" names none: "I", "my", "me" are not a name's words."""
    terms = set(tokenize(query))
    for rel in candidates:
        for name in (rel.source, rel.destination):
            words = set(tokenize(name))
            if words and words <= terms:
                return True
    return False


def bm25(texts: Sequence[str], query: str, k1: float = 1.2, b: float = 0.75) -> list[float]:
    """Okapi BM25 of ``query`` over ``texts``, the same scores as ``text.BM25`` but counting only the
    query's terms (a first-person question reads a user's 1,000 relations on every search: building
    a term table per relation was most of the ranking's time)."""
    terms = set(tokenize(query))
    docs = [tokenize(t) for t in texts]  # cached per text
    n = len(docs)
    if not terms or not n:
        return [0.0] * n
    lengths = [len(d) for d in docs]
    avg = sum(lengths) / n or 1.0
    counts = [{t: c for t in terms if (c := d.count(t))} if terms.intersection(d) else {} for d in docs]
    df = Counter(t for c in counts for t in c)
    idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
    return [sum(idf[t] * tf * (k1 + 1) / (tf + k1 * (1 - b + b * length / avg)) for t, tf in c.items())
            for c, length in zip(counts, lengths, strict=True)]


def _triple(step: dict[str, str]) -> Triple:
    return step["source"], step["relationship"], step["destination"]


def path_scores(candidates: Sequence[Relation]) -> list[float]:
    """Per candidate, the best match of a two-hop path it lies on: the higher of the path's two
    fact cosines (``vector``), for the path's last relation and for the first hop leading to it;
    0 for a relation on no path among the candidates.

    Why the higher: a two-hop question names both hops in few words ("where is Kenji's employer
    based?"): one hop usually carries the question's meaning and the other only connects it; the
    average would let every path through a well-matching first hop tie.
    """
    first: dict[Triple, float] = {}
    where: dict[Triple, int] = {}
    for i, r in enumerate(candidates):
        if r.hops == 1:
            key = (r.source, r.relationship, r.destination)
            first[key] = max(first.get(key, 0.0), r.scores.get("vector", 0.0))
            where.setdefault(key, i)
    out = [0.0] * len(candidates)
    for i, r in enumerate(candidates):
        if r.hops < 2 or not r.path:
            continue
        lead = _triple(r.path[0])
        best = max(first.get(lead, 0.0), r.scores.get("vector", 0.0))
        out[i] = max(out[i], best)
        if lead in where:
            out[where[lead]] = max(out[where[lead]], best)
    return out


def spread(ranked: list[Relation], decay: float) -> list[Relation]:
    """``ranked`` (best first) re-ordered with each relation's score times ``(1 - decay)`` per
    relation of the same source and relationship type ranked above it (stable: ties keep their
    order). The same as picking greedily with that penalty, since a kind's relations keep their
    order among themselves. ``score`` becomes the spread one; the fused one stays in
    ``scores["fused"]`` when they differ."""
    if decay <= 0:
        return ranked
    seen: Counter[tuple[str, str]] = Counter()
    for rel in ranked:
        key = (rel.source_id, rel.relationship)
        if seen[key]:
            rel.scores["fused"] = rel.score or 0.0
            rel.score = (rel.score or 0.0) * (1 - decay) ** seen[key]
        seen[key] += 1
    return sorted(ranked, key=lambda r: -(r.score or 0.0))
