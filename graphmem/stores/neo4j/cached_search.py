"""search_graph.cypher's common case with the exact scans done in the client (scope_cache.py).

A search (one hop, pooled, with a query vector, no relation filter, a scope small enough for the
exact entity scan) reads the scope's version and its fulltext seeds, and the scope's vectors when
the cache does not hold that version (search_graph_seeds.cypher); ranks as search_graph.cypher does
(the same seeds, time filter, per-seed pools, fact candidates, scores and order); and reads the
chosen relations the entry has not read before (search_graph_rows.cypher): one round trip for a
warm scope. Any other query runs search_graph.cypher.

A version is loaded the second time a search meets it: the first search after a write runs
search_graph.cypher (a load reads the same vectors and decodes them in the driver, about 1.8x that
statement), so an agent that adds and searches in turn pays what it paid before (and one round
trip), and a scope searched again before its next write pays one load for all its later searches.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from typing import Any

import neo4j
import numpy as np
import numpy.typing as npt

from graphmem.schema.filters import scoped
from graphmem.stores.base import GraphQuery
from graphmem.stores.neo4j import queries
from graphmem.stores.neo4j.scope_cache import LAST, ScopeCache, ScopeVectors, load
from graphmem.stores.neo4j.values import Statement, VectorPlan, fulltext_terms, lucene_escape, utc
from graphmem.types import Relation, Scope, utcnow

Run = Callable[[Statement], list[neo4j.Record]]
EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
Mask = npt.NDArray[np.bool_]


def applies(scope: Scope, query: GraphQuery) -> bool:
    """The queries this path answers; search_graph.cypher answers the others (and any with a
    relation filter, a scope's narrowing ids included: the cache holds the whole partition)."""
    simple = bool(query.embedding) and query.relation_pool is not None and int(query.hops) == 1
    return simple and scoped(scope, query.filters, "relation") is None


def seeds_statement(
    scope: Scope, query: GraphQuery, plan: VectorPlan, known_version: str | None, seen_version: str | None
) -> Statement:
    """The scope's version and size, the query's fulltext seeds (as search_graph.cypher finds them)
    and, when the version is not ``known_version`` but ``seen_version`` (seen by an earlier search
    of the process), the scope's vectors."""
    top_k = int(query.top_k)
    return Statement("search_graph_seeds", {
        "scope": scope.key, "known_version": known_version, "seen_version": seen_version, "scan_limit": plan.scan_limit,
        "fulltext_terms": fulltext_terms(query.text or "", names=True), "fulltext_scope": lucene_escape(scope.key),
        "fulltext_limit": top_k * plan.fulltext_k + 10, "top_k": top_k,
    })  # fmt: skip


def rows_statement(scope: Scope, rows: list[dict[str, Any]]) -> Statement:
    return Statement("search_graph_rows", {"scope": scope.key, "rows": rows})


def search(run: Run, cache: ScopeCache, scope: Scope, query: GraphQuery, plan: VectorPlan, dims: int, limit: int) -> list[Relation] | None:
    """The relations search_graph.cypher returns for ``query``; None when the scope has no version
    or is too large for the exact entity scan (the caller runs search_graph.cypher)."""
    held = cache.peek(scope.key)
    known = None if held is None else held.version
    (head,) = run(seeds_statement(scope, query, plan, known, cache.seen(scope.key)))
    version = head["version"]
    if version is None or head["scope_size"] > plan.scan_limit:  # never written since versions exist (or erased); large
        return None
    vectors = cache.get(scope.key, version)
    if vectors is None:
        if head["entities"] is None:  # a version seen for the first time (or evicted since it was peeked)
            cache.see(scope.key, version)
            return None
        vectors = load(head, dims)
        cache.put(scope.key, vectors)
    chosen = rank(vectors, query, [(str(i), float(s)) for i, s in head["hits"]], limit)
    _fetch(run, scope, vectors, [k for k, _ in chosen])
    return [_scored(vectors.rows[k], scores) for k, scores in chosen if k in vectors.rows]


def _fetch(run: Run, scope: Scope, v: ScopeVectors, wanted: list[int]) -> None:
    """Read the relations of ``wanted`` the entry has not materialised yet (search_graph_rows.cypher).
    Kept with the entry: its version covers them (every write of the scope bumps it)."""
    missing = [{"i": k, "eid": v.eids[k], "id": v.rel_ids[k]} for k in wanted if k not in v.rows]
    if missing:
        for row in run(rows_statement(scope, missing)):
            if queries.is_live_relation(row):  # deleted while read: left out of this search (and not kept)
                v.rows[int(row["i"])] = queries.to_relation(row)


def _scored(template: Relation, scores: dict[str, float]) -> Relation:
    """A copy of the entry's relation with this search's scores (the caller may change its copy)."""
    out = object.__new__(Relation)  # copy.copy, without its generic protocol (~100 relations a search)
    out.__dict__.update(template.__dict__)
    out.provenance = list(template.provenance)
    out.source_attributes, out.destination_attributes = dict(template.source_attributes), dict(template.destination_attributes)
    out.scores = scores
    return out


def rank(v: ScopeVectors, query: GraphQuery, hits: list[tuple[str, float]], limit: int) -> list[tuple[int, dict[str, float]]]:
    """search_graph.cypher's ranking for a one-hop pooled query: the chosen relations (indexes of
    the entry) in order, each with its scores."""
    seeds = _seeds(v, query, hits)
    mask = np.ones(len(v.rel_ids), dtype=bool) if query.include_invalidated else visible(v, query)
    cosine = _fact_scores(v, query)
    order = np.lexsort((v.tie_rank, -cosine))
    position = np.empty(len(order), dtype=np.int64)
    position[order] = np.arange(len(order))
    found: dict[int, list[float]] = {}  # relation -> [fulltext, seed]
    pool = int(query.relation_pool or 0)
    matched = _matched(v, [str(t).lower() for t in query.fact_terms]) if seeds else None
    for entity, (fulltext, seed) in seeds.items():
        for k in _pooled(v, entity, mask, position, pool, matched):
            scores = found.setdefault(k, [0.0, 0.0])
            scores[0], scores[1] = max(scores[0], fulltext), max(scores[1], seed)
    near = order[(mask & v.fact_has & (cosine >= float(query.threshold)))[order]][: max(0, int(query.fact_top_k))]
    for k in near.tolist():
        found.setdefault(k, [0.0, 0.0])
    best = {k: max(0.0, float(cosine[k]), f, s) for k, (f, s) in found.items()}
    chosen = sorted(found, key=lambda k: (-best[k], int(v.tie_rank[k])))[:limit]
    return [(k, {"vector": float(cosine[k]), "fulltext": found[k][0], "seed": found[k][1]}) for k in chosen]


def _seeds(v: ScopeVectors, query: GraphQuery, hits: list[tuple[str, float]]) -> dict[int, tuple[float, float]]:
    """Seed entities -> (fulltext, seed): by vector (the exact scan), by name text, by exact name."""
    q = np.asarray(query.embedding, dtype=np.float64)
    q = q / (np.linalg.norm(q) or 1.0)
    cos = v.entity_vectors.astype(np.float64) @ q  # in double, as Neo4j's cosine: float32 sums flip near ties
    ok = np.flatnonzero(v.entity_has & (cos >= float(query.threshold)))
    by_vector = sorted(ok, key=lambda i: (-cos[i], int(v.entity_rank[i])))[: int(query.top_k)]
    out: dict[int, list[float]] = {int(i): [0.0, float(cos[i])] for i in by_vector}
    top = hits[0][1] if hits else 0.0
    for entity_id, score in hits:
        if (i := v.entity_index.get(entity_id)) is not None:
            best = out.setdefault(i, [0.0, 0.0])
            best[0] = max(best[0], score / top if top > 0 else 0.0)
    wanted = set(query.seed_canonicals)
    for i in _named(v, wanted):
        out.setdefault(i, [0.0, 0.0])[1] = 1.0
    return {i: (f, s) for i, (f, s) in out.items()}


def _named(v: ScopeVectors, canonicals: set[str]) -> list[int]:
    return [i for c in canonicals for i in v.canonical.get(c, [])]


def visible(v: ScopeVectors, query: GraphQuery) -> Mask:
    """stores.base.relation_visible over the arrays, exactly as search_graph.cypher writes it."""
    known = _micros(utc(query.known_at))
    # relation_visible's event time: as_of, else known_at, else now (as queries.search_graph)
    event = _micros(utc(query.as_of)) if query.as_of is not None else known
    if event is None:
        event = int(_micros(utcnow()) or 0)
    mask = (v.valid <= event) & ((event < v.invalid) | ((known is not None) & v.has_expired))
    if known is not None:
        mask &= (v.created <= known) | (v.created == LAST)  # no created_at: known at any time
        mask &= known < v.expired
    return mask


def _micros(value: datetime | None) -> int | None:
    """Microseconds since the epoch, exactly (integer arithmetic; any year 1-9999)."""
    if value is None:
        return None
    return (value - EPOCH) // timedelta(microseconds=1)


def _fact_scores(v: ScopeVectors, query: GraphQuery) -> npt.NDArray[np.float64]:
    """search_graph.cypher's fact score: norm * cosine + shift with a fact vector, else 0."""
    scoring = queries.fact_scoring(query)
    moved = np.asarray(scoring["fact_embedding"], dtype=np.float64)
    moved = moved / (np.linalg.norm(moved) or 1.0)
    norm, shift = scoring["fact_norm"], scoring["fact_shift"]
    assert isinstance(norm, float) and isinstance(shift, float)
    scores = norm * (v.fact_vectors.astype(np.float64) @ moved) + shift
    return np.where(v.fact_has, scores, 0.0)


def _matched(v: ScopeVectors, terms: list[str]) -> npt.NDArray[np.int64] | None:
    """How many of ``terms`` each relation's fact contains (search_graph.cypher's ``matched``)."""
    if not terms:
        return None
    counts = np.zeros(len(v.fact_text), dtype=np.int64)
    for t in terms:
        counts += np.char.find(v.fact_text, t) >= 0
    return np.where(v.fact_known, counts, 0)


def _pooled(
    v: ScopeVectors, entity: int, mask: Mask, position: npt.NDArray[np.int64], pool: int, matched: npt.NDArray[np.int64] | None
) -> list[int]:
    """The seed's ``pool`` visible relations best by fact score, and the ``pool`` whose fact holds
    most of the query's terms (ties by fact score)."""
    own = v.incident[entity]
    own = own[mask[own]]
    own = own[np.argsort(position[own], kind="stable")]
    out: list[int] = own[:pool].tolist()
    if matched is not None and pool > 0:
        hit = own[matched[own] > 0]
        out += hit[np.argsort(-matched[hit], kind="stable")][:pool].tolist()
    return out
