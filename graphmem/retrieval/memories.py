"""Memory-fact search: candidates from the store, their conversation and time context, BM25, fused.

1. ``search_memories`` (one round trip): vector and fulltext candidates. The store's fulltext hits
   only widen the pool: its score is BM25 over raw tokens, so fusing it beside our BM25 (stopwords,
   stemming) counted the same word matches twice (LOCOMO recall@10: 0.677 -> 0.695 without it).
2. ``memory_context`` (one more round trip, only when the preset or the question needs it): the
   messages just before and after the best hits (by turn order, fetched even when they were not
   candidates: the answer to "how did you two meet?" is often the turn after the one that matches
   the question), and the memories whose resolved times fall in the question's date range.
3. Own scores: BM25 over the pool (the text plus the words of its resolved dates; length
   normalisation ``preset.bm25_b``, 0.5: messages are short), vector, and a
   ``time`` signal (the item's dates overlap the question's range; or, for "when ..." questions, the
   item names a time), fused by the preset. Then each item gains ``preset.context`` x the best own
   score of its direct neighbours in the conversation, and ``preset.session`` x the share of the
   ranking's head said in its session (session_support: the cluster hypothesis), and ``preset.speaker``
   when the user said it and the candidates also hold the assistant's words (speaker_prior).
4. ``neighbours_as="hits"``: fetched neighbours are ranked as hits of their own; ``"context"``: they
   ride along on their hit as ``context`` and only candidates are ranked.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import date, datetime
from typing import Any

from graphmem.retrieval.coverage import interleave, mmr, question_parts
from graphmem.retrieval.fusion import fuse, keep_anchor, relative
from graphmem.retrieval.presets import SearchPreset
from graphmem.retrieval.rerank import Reranker, rerank
from graphmem.retrieval.text import BM25, Document
from graphmem.retrieval.when import QueryTime, overlap
from graphmem.schema.filters import Filter
from graphmem.stores.base import GraphStore, MemoryQuery
from graphmem.stores.memory_context import ContextQuery, MemoryContext
from graphmem.types import MemoryItem, Scope, time_words

#: candidates fetched per signal, relative to the requested limit
OVERFETCH = 3


def search_memories(
    store: GraphStore,
    scope: Scope,
    query: str,
    embedding: list[float],
    preset: SearchPreset,
    limit: int,
    filters: Filter | None = None,
    as_of: datetime | None = None,
    threshold: float | None = None,
    when: QueryTime | None = None,
    known_at: datetime | None = None,
    reranker: Reranker | None = None,
) -> list[MemoryItem]:
    top_k = max(limit * OVERFETCH, 30)
    candidates = store.search_memories(scope, MemoryQuery(embedding, query, top_k=top_k, filters=filters, as_of=as_of, known_at=known_at))
    candidates = _above(candidates, threshold)
    when = when if preset.weights.get("time") else None
    dated = bool(when and when.spans)
    if not candidates and not dated:
        return []
    pool = {m.id: m for m in candidates}
    context = MemoryContext()
    seeds: list[str] = []
    if preset.neighbours and any(m.turn for m in candidates):  # only messages have neighbours
        own = _own_scores(candidates, query, preset, when)
        seeds = [i for i in sorted(pool, key=lambda i: -own[i])[:limit] if pool[i].turn]
    if seeds or dated:
        ask = ContextQuery(embedding, seeds, preset.neighbours, preset.neighbours, filters=filters, as_of=as_of, time_k=top_k)
        if dated and when is not None:
            ask.time_from, ask.time_to = when.start, when.end
        context = store.memory_context(scope, ask)
        for item in _above(context.dated, threshold):
            pool.setdefault(item.id, item)
        if preset.neighbours_as == "hits":
            for n in context.neighbours:
                if threshold is None or n.item.scores.get("vector", 0.0) >= threshold:
                    pool.setdefault(n.item.id, n.item)
    if reranker is None:
        return _rank(pool, context, query, preset, when, limit)
    return rerank(_rank(pool, context, query, preset, when, max(limit, preset.rerank_top)), query, reranker, preset.rerank_top)[:limit]


def _rank(
    pool: dict[str, MemoryItem], context: MemoryContext, query: str, preset: SearchPreset, when: QueryTime | None, limit: int
) -> list[MemoryItem]:
    scored = dict(pool)
    for n in context.neighbours:  # neighbours shown as context are scored too
        scored.setdefault(n.item.id, n.item)
    own = _own_scores(list(scored.values()), query, preset, when)
    adjacent: dict[str, set[str]] = defaultdict(set)
    for n in context.neighbours:
        if abs(n.offset) == 1:
            adjacent[n.of].add(n.item.id)
            adjacent[n.item.id].add(n.of)
    support = session_support(pool, own, limit) if preset.session else {}
    speaking = speaker_prior(pool, preset.speaker)
    for item_id, item in pool.items():
        boost = preset.context * max((max(own[j], 0.0) for j in adjacent[item_id]), default=0.0)
        if preset.context:
            item.scores["context"] = boost
        if support:
            item.scores["session"] = preset.session * support[item_id]
            boost += item.scores["session"]
        if speaking:
            item.scores["speaker"] = speaking[item_id]
            boost += speaking[item_id]
        item.score = own[item_id] + boost
    ranked = _listed(pool, preset)
    ranked.sort(key=lambda m: (-(m.score or 0), -m.scores.get("vector", 0.0), -(m.created_at.timestamp() if m.created_at else 0.0)))
    ranked = _cover(ranked, list(scored.values()), own, query, preset, when, limit)[:limit]
    ranked = anchored(ranked, pool, preset.anchor, limit)
    if preset.neighbours_as == "context":
        _attach(ranked, context, scored, own)
    return ranked


def anchored(ranked: list[MemoryItem], pool: dict[str, MemoryItem], factor: float, limit: int) -> list[MemoryItem]:
    """``ranked`` with the vector signal's own best kept near the top (fusion.keep_anchor); an item
    placed there by the anchor, not by its fused score, says so in ``scores["anchored"]``."""
    if not factor:
        return ranked
    by_meaning = sorted(pool.values(), key=lambda m: (-m.scores.get("vector", 0.0), m.id))
    order = keep_anchor([m.id for m in ranked], [m.id for m in by_meaning], factor, limit)
    fused = {m.id for m in ranked}
    for item_id in order:
        if item_id not in fused:
            pool[item_id].scores["anchored"] = 1.0
    return [pool[i] for i in order]


def _listed(pool: dict[str, MemoryItem], preset: SearchPreset) -> list[MemoryItem]:
    """The items that rank: a fused score above 0, or (the preset weighing the meaning) a positive
    cosine. Why the second: a model's rank floor (bge-small 0.5) sits near the median cosine of a
    conversation's messages, and a candidate below it scores 0; a plain vector search must still
    return its ``limit`` nearest (they come last, nearest first)."""
    meaning = bool(preset.weights.get("vector"))
    return [m for m in pool.values() if (m.score or 0) > 0 or (meaning and m.scores.get("vector", 0.0) > 0)]


def _cover(
    ranked: list[MemoryItem], items: list[MemoryItem], own: dict[str, float], query: str, preset: SearchPreset,
    when: QueryTime | None, limit: int,
) -> list[MemoryItem]:
    """The ranking with a multi-part question's part rankings interleaved, then diversified (MMR);
    unchanged when the preset asks for neither (retrieval.coverage)."""
    parts = question_parts(query) if preset.decompose else []
    if parts:
        by_id = {m.id: m for m in ranked}
        lists = [[m.id for m in ranked]]
        for part in parts:
            mine = _own_scores(items, part, preset, when, record=False)
            lists.append(sorted(by_id, key=lambda i: -(mine[i] + (by_id[i].score or 0.0) - own[i])))
        ranked = [by_id[i] for i in interleave(lists)]
    if preset.diversity:
        by_id = {m.id: m for m in ranked}
        order = mmr([m.id for m in ranked], [m.score or 0.0 for m in ranked], [m.text for m in ranked], limit, preset.diversity)
        ranked = [by_id[i] for i in order]
    return ranked


def session_of(item: MemoryItem) -> tuple[str | None, date] | None:
    """The conversation session a message belongs to: its run and the day it was said (None for a
    memory that was not said in a conversation)."""
    return (item.run_id, item.said_at.date()) if item.said_at is not None else None


def session_support(pool: dict[str, MemoryItem], own: dict[str, float], head: int) -> dict[str, float]:
    """Per item, how much of the ranking's head (the ``head`` best by own score, each counted as
    own / best) sits in its session, itself left out.

    Why (the cluster hypothesis): hits that gather in one session support each other, as the turns
    of one exchange do; a lone match in a session nothing else points at is weaker evidence. A
    question whose head spreads over several sessions gives each of them a little.
    """
    ranked = sorted(pool, key=lambda i: -own[i])[:head]
    best = max((own[i] for i in ranked), default=0.0)
    if best <= 0:
        return {}
    mass: dict[tuple[str | None, date], float] = defaultdict(float)
    share = {i: max(own[i], 0.0) / best for i in ranked}
    for i in ranked:
        key = session_of(pool[i])
        if key is not None:
            mass[key] += share[i]
    out = {}
    for i, item in pool.items():
        key = session_of(item)
        out[i] = mass[key] - share.get(i, 0.0) if key is not None else 0.0
    return out


def speaker_prior(pool: dict[str, MemoryItem], weight: float) -> dict[str, float]:
    """Per item, ``weight`` when it is the user's (role "user", or no role recorded: a fact about the
    user, as memories imported from elsewhere may be), 0 when another speaker said it (assistant,
    system, tool); nothing (no item changes) unless the candidates hold both kinds.

    Why: a memory is asked about its user ("which versions did I say I was using?"), and in a chat
    the user's turns state the facts while the assistant's turns explain around them in the same
    words. BEAM dev: 76% of the gold turns are the user's, against 50% of the messages; a question's
    answer is the assistant's alone for 8 of its 179 questions. A store of one role (extracted facts
    only, or a conversation ingested as the user's) ranks exactly as without it."""
    users = {i: m.role in (None, "user") for i, m in pool.items()}
    if not weight or all(users.values()) or not any(users.values()):
        return {}
    return {i: weight if user else 0.0 for i, user in users.items()}


def _own_scores(
    items: list[MemoryItem], query: str, preset: SearchPreset, when: QueryTime | None, record: bool = True
) -> dict[str, float]:
    """Each item's fused score on its own (vector, BM25 over text + date words, time); sets ``scores``
    unless ``record`` is False (a question part's scores are not the item's)."""
    with_dates = bool(preset.weights.get("time"))
    texts: list[Document] = [(m.text, time_words(m.times)) if with_dates and m.times else m.text for m in items]
    bm25 = BM25(texts, b=preset.bm25_b).scores(query)
    floor = preset.vector_floor if preset.memory_vector_floor is None else preset.memory_vector_floor
    signals = {"vector": relative([m.scores.get("vector", 0.0) for m in items], floor), "bm25": bm25}
    if when:
        signals["time"] = [time_score(m, when) for m in items]
    fused = fuse(signals, preset.weights, preset.fusion, k=preset.rrf_k, selective=preset.selective)
    for i, m in enumerate(items if record else ()):
        m.scores["bm25"] = bm25[i]
        if "time" in signals:
            m.scores["time"] = signals["time"][i]
    return {m.id: score for m, score in zip(items, fused, strict=True)}


def time_score(item: MemoryItem, when: QueryTime) -> float:
    """1 when the item's resolved times overlap the question's range (0.5 when only the moment it
    was said does); without a range, for a question that asks when, 1 when the item names a time."""
    start, end = when.start, when.end
    if start is not None and end is not None:
        if overlap(item.times, start, end):
            return 1.0
        return 0.5 if item.said_at is not None and start <= item.said_at < end else 0.0
    return 1.0 if when.asks_when and item.times else 0.0


def _attach(ranked: list[MemoryItem], context: MemoryContext, scored: dict[str, MemoryItem], own: dict[str, float]) -> None:
    by_hit: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for n in context.neighbours:
        entry: dict[str, Any] = dict(n.item.to_dict())
        entry.pop("scores", None)
        entry.update(offset=n.offset, score=round(own.get(n.item.id, 0.0), 6))
        by_hit[n.of].append(entry)
    for m in ranked:
        m.context = sorted(by_hit.get(m.id, []), key=lambda e: e["offset"])


def _above(items: list[MemoryItem], threshold: float | None) -> list[MemoryItem]:
    return items if threshold is None else [m for m in items if m.scores.get("vector", 0.0) >= threshold]
