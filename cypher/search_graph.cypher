// Relations around the query's seeds, with each relation's best seed scores, and the relations
// closest to the query by their own fact embedding, in one query.
// Seeds: (a) the $top_k entities most similar to $embedding with cosine >= $threshold (the same
// plans as resolve.cypher: exact scan of a small scope, the scope's own index when it has
// one (a partition), else the oversampled global index; skipped when $embedding is null); (b) the $top_k best fulltext hits of $fulltext_terms
// on names, pre-filtered by the scope's tokens inside Lucene (boost 0, so the filter does not move
// the score) and normalised to 0..1 by the best hit (skipped when $fulltext_terms is null);
// (c) the entities named exactly in $seed_canonicals.
// Time: exactly stores.base.relation_visible. $known_at (transaction time, may be null): created by
// then and not yet expired then; an invalid_at set by a later invalidation (expired_at not null)
// was not known then and is ignored. Event time at $event_time (the caller's as_of, else known_at,
// else now; never the server clock): valid_at <= $event_time < invalid_at, open ends allowed, so a
// relation retired today whose invalid_at lies in the future is still valid until then.
// $include_invalidated: no time filter.
// Pool ($pooled, GraphQuery.relation_pool): per seed, only its $relation_pool relations best by
// fact score and the $relation_pool whose fact contains most of $fact_terms (a hub such as the
// user's own node holds hundreds); paths likewise. Without it, every relation of a seed.
// Paths: with $hops = 2 the relations two hops from a seed come too, the time filter applied to every
// relation of the path; such a relation's scores are its seed's times $hop_decay, and it carries the
// path from the seed ({source, relationship, destination} per step; the shortest when several).
// Facts: the $fact_k relations of the scope with the best fact score (below; >=
// $threshold), under the same time filter and relation filter, come too, seeded or not: an exact scan
// of the scope's relations (Neo4j 5.26 indexes relationship vectors per relationship type only, and
// graphmem's types are open-ended; docs/neo4j.md).
// Scores: vector = the relation's fact score: its own fact_embedding (a unit vector) . $fact_embedding
// + $fact_shift, computed as $fact_norm * cosine + $fact_shift ($fact_norm: the norm of
// $fact_embedding; GraphQuery.fact_embedding, retrieval.hubness; the plain cosine of $embedding
// when the query has no correction), 0 without one; the pools and $fact_k rank by it too;
// seed = entity proximity, the best of a seeded endpoint's cosine and 1.0 for an endpoint named in
// $seed_canonicals; fulltext = an endpoint's name text match; seed and fulltext decayed per hop.
// Order: best of the three scores first, then fewer hops, then oldest first.
//
// Parameters: $scope, $embedding, $threshold, $top_k, $scan_limit, $max_k, $fulltext_terms,
//             $fulltext_scope, $fulltext_limit, $seed_canonicals, $known_at, $event_time,
//             $include_invalidated, $relation_limit, $hops (1 or 2), $hop_decay, $fact_k, $pooled,
//             $relation_pool, $fact_terms, $fact_embedding, $fact_norm, $fact_shift, the relation filter's
//             (fr_0, ...) (the placeholder "true /* relation filter */" is replaced by graphmem.stores.neo4j.filters)
CALL () {
  CALL () {
    MATCH (n:Entity) WHERE n.scope = $scope
    RETURN count(n) AS scope_size
  }
  CALL () {
    MATCH (n:Entity)
    RETURN count(n) AS total
  }
  CALL () {
    OPTIONAL MATCH (p:ScopePartition {scope: $scope})
    RETURN p.index AS partition_index
  }
  CALL (scope_size, total, partition_index) {
    // the guard sits inside the seek value: a WHERE on the branch alone is evaluated after the seek
    MATCH (n:Entity)
    WHERE n.scope = CASE WHEN $embedding IS NOT NULL AND scope_size <= $scan_limit THEN $scope END
      AND size(n.embedding) = size($embedding)
    WITH n, 2 * vector.similarity.cosine(n.embedding, $embedding) - 1 AS cosine
    WHERE cosine >= $threshold
    RETURN n AS node, 0.0 AS fulltext, cosine AS seed
    ORDER BY seed DESC, node.id
    LIMIT $top_k
    UNION ALL
    WITH * WHERE $embedding IS NOT NULL AND scope_size > $scan_limit
    WITH toInteger(ceil(toFloat($top_k) * total / CASE WHEN scope_size > 0 THEN scope_size ELSE 1 END)) AS wanted, partition_index
    CALL db.index.vector.queryNodes(
      coalesce(partition_index, 'entity_embedding'),
      CASE WHEN partition_index IS NOT NULL THEN $top_k WHEN wanted > $max_k THEN $max_k ELSE wanted END, $embedding)
    YIELD node
    WITH node WHERE node.scope = $scope
    WITH node, 2 * vector.similarity.cosine(node.embedding, $embedding) - 1 AS cosine
    WHERE cosine >= $threshold
    RETURN node, 0.0 AS fulltext, cosine AS seed
    ORDER BY seed DESC, node.id
    LIMIT $top_k
    UNION ALL
    WITH * WHERE $fulltext_terms IS NOT NULL
    CALL db.index.fulltext.queryNodes(
      'text_fulltext', 'name:(' + $fulltext_terms + ') AND scope:"' + $fulltext_scope + '"^0',
      {limit: $fulltext_limit})
    YIELD node, score
    WITH node, score
    WHERE node:Entity AND node.scope = $scope
    WITH node, score
    ORDER BY score DESC, node.id
    LIMIT $top_k
    WITH collect({node: node, score: score}) AS hits
    UNWIND hits AS hit
    RETURN hit.node AS node, CASE WHEN hits[0].score > 0 THEN hit.score / hits[0].score ELSE 0.0 END AS fulltext, 0.0 AS seed
    UNION ALL
    MATCH (n:Entity)
    WHERE n.scope = $scope AND n.canonical IN $seed_canonicals
    RETURN n AS node, 0.0 AS fulltext, 1.0 AS seed
  }
  WITH node, max(fulltext) AS fulltext, max(seed) AS seed
  WITH collect({node: node, fulltext: fulltext, seed: seed}) AS seeds
  // the scope's relations visible then and passing the filter, best fact cosine first (ties oldest
  // first), each with how many of $fact_terms its fact contains: one exact scan (Neo4j 5.26
  // indexes relationship vectors per relationship type only, and graphmem's types are open-ended;
  // docs/neo4j.md), read by the seeds' pools and by the fact candidates. The guard sits inside the
  // seek value: without $pooled or $fact_k nothing is scanned
  CALL () {
    MATCH (s:Entity)-[r]->(d:Entity)
    WHERE s.scope = CASE WHEN $embedding IS NOT NULL AND ($pooled OR $fact_k > 0) THEN $scope END
      AND r.scope = $scope
      AND ($include_invalidated OR (
        ($known_at IS NULL OR ((r.created_at IS NULL OR r.created_at <= $known_at)
                               AND (r.expired_at IS NULL OR $known_at < r.expired_at)))
        AND (r.valid_at IS NULL OR r.valid_at <= $event_time)
        AND (r.invalid_at IS NULL OR $event_time < r.invalid_at OR ($known_at IS NOT NULL AND r.expired_at IS NOT NULL))
      ))
      AND true /* relation filter */
    WITH r, CASE WHEN size(r.fact_embedding) = size($embedding) THEN $fact_norm * (2 * vector.similarity.cosine(r.fact_embedding, $fact_embedding) - 1) + $fact_shift ELSE 0.0 END AS cosine,
         CASE WHEN size($fact_terms) > 0 AND r.fact IS NOT NULL THEN size([t IN $fact_terms WHERE toLower(r.fact) CONTAINS t]) ELSE 0 END AS matched
    ORDER BY cosine DESC, r.created_at, r.seq, r.id
    RETURN collect({r: r, cosine: cosine, matched: matched, fact: size(r.fact_embedding) = size($embedding)}) AS ranked
  }
  CALL (seeds, ranked) {
    UNWIND seeds AS seed_row
    WITH seed_row.node AS node, seed_row.fulltext AS fulltext, seed_row.seed AS seed, ranked
    CALL (node, ranked) {
      // $pooled: the seed's $relation_pool relations closest by fact cosine and the $relation_pool
      // whose fact contains most of $fact_terms (then by cosine), read from the scope's scan
      WITH node, ranked WHERE $pooled
      WITH [x IN ranked WHERE startNode(x.r) = node OR endNode(x.r) = node] AS own
      UNWIND own[..$relation_pool] + reduce(hits = [], m IN range(size($fact_terms), 1, -1) | hits + [x IN own WHERE x.matched = m])[..$relation_pool] AS x
      RETURN [x.r] AS rs
      UNION ALL
      // not pooled (an add's reads, the agreement read): every relation of the seed
      WITH node WHERE NOT $pooled
      MATCH (node)-[r]-(:Entity)
      WHERE r.scope = $scope
        AND ($include_invalidated OR (
          ($known_at IS NULL OR ((r.created_at IS NULL OR r.created_at <= $known_at)
                                 AND (r.expired_at IS NULL OR $known_at < r.expired_at)))
          AND (r.valid_at IS NULL OR r.valid_at <= $event_time)
          AND (r.invalid_at IS NULL OR $event_time < r.invalid_at OR ($known_at IS NOT NULL AND r.expired_at IS NOT NULL))
        ))
      RETURN [r] AS rs
      UNION ALL
      // the guard is a parameter: with $hops = 1 the two-hop expansion never starts. Paths are
      // pooled by their better hop's cosine and by the terms of their last hop's fact; each comes
      // with its first hop
      WITH node WHERE $hops >= 2
      MATCH (node)-[path*2..2]-(far:Entity)
      WHERE far <> node AND all(r IN path WHERE r.scope = $scope
        AND ($include_invalidated OR (
          ($known_at IS NULL OR ((r.created_at IS NULL OR r.created_at <= $known_at)
                                 AND (r.expired_at IS NULL OR $known_at < r.expired_at)))
          AND (r.valid_at IS NULL OR r.valid_at <= $event_time)
          AND (r.invalid_at IS NULL OR $event_time < r.invalid_at OR ($known_at IS NOT NULL AND r.expired_at IS NOT NULL))
        )))
      WITH path, path[0] AS r, startNode(path[0]) AS s, endNode(path[0]) AS d
      WHERE true /* relation filter */
      WITH path, path[1] AS r, startNode(path[1]) AS s, endNode(path[1]) AS d
      WHERE true /* relation filter */
      WITH path, CASE WHEN size(path[0].fact_embedding) = size($embedding) THEN $fact_norm * (2 * vector.similarity.cosine(path[0].fact_embedding, $fact_embedding) - 1) + $fact_shift ELSE 0.0 END AS c0,
           CASE WHEN size(path[1].fact_embedding) = size($embedding) THEN $fact_norm * (2 * vector.similarity.cosine(path[1].fact_embedding, $fact_embedding) - 1) + $fact_shift ELSE 0.0 END AS c1,
           size([t IN $fact_terms WHERE toLower(coalesce(path[1].fact, '')) CONTAINS t]) AS matched
      WITH path, CASE WHEN c0 > c1 THEN c0 ELSE c1 END AS cosine, matched
      WHERE true
      ORDER BY cosine DESC, path[0].created_at, path[0].seq, path[1].created_at, path[1].seq, path[0].id, path[1].id
      LIMIT $relation_pool
      UNWIND [path, path[0..1]] AS rs
      RETURN rs
      UNION ALL
      WITH node WHERE $hops >= 2 AND size($fact_terms) > 0
      MATCH (node)-[path*2..2]-(far:Entity)
      WHERE far <> node AND all(r IN path WHERE r.scope = $scope
        AND ($include_invalidated OR (
          ($known_at IS NULL OR ((r.created_at IS NULL OR r.created_at <= $known_at)
                                 AND (r.expired_at IS NULL OR $known_at < r.expired_at)))
          AND (r.valid_at IS NULL OR r.valid_at <= $event_time)
          AND (r.invalid_at IS NULL OR $event_time < r.invalid_at OR ($known_at IS NOT NULL AND r.expired_at IS NOT NULL))
        )))
      WITH path, path[0] AS r, startNode(path[0]) AS s, endNode(path[0]) AS d
      WHERE true /* relation filter */
      WITH path, path[1] AS r, startNode(path[1]) AS s, endNode(path[1]) AS d
      WHERE true /* relation filter */
      WITH path, CASE WHEN size(path[0].fact_embedding) = size($embedding) THEN $fact_norm * (2 * vector.similarity.cosine(path[0].fact_embedding, $fact_embedding) - 1) + $fact_shift ELSE 0.0 END AS c0,
           CASE WHEN size(path[1].fact_embedding) = size($embedding) THEN $fact_norm * (2 * vector.similarity.cosine(path[1].fact_embedding, $fact_embedding) - 1) + $fact_shift ELSE 0.0 END AS c1,
           size([t IN $fact_terms WHERE toLower(coalesce(path[1].fact, '')) CONTAINS t]) AS matched
      WITH path, CASE WHEN c0 > c1 THEN c0 ELSE c1 END AS cosine, matched
      WHERE matched > 0
      ORDER BY matched DESC, cosine DESC, path[0].created_at, path[0].seq, path[1].created_at, path[1].seq, path[0].id, path[1].id
      LIMIT $relation_pool
      UNWIND [path, path[0..1]] AS rs
      RETURN rs
    }
    WITH last(rs) AS r, size(rs) AS hops, $hop_decay ^ (size(rs) - 1) AS decay, fulltext, seed,
         [x IN rs | {source: startNode(x).name, relationship: type(x), destination: endNode(x).name}] AS path
    RETURN r, hops, path, fulltext * decay AS fulltext, seed * decay AS seed
    UNION ALL
    // the $fact_k relations of the scope closest to the query by fact (cosine >= $threshold), seeded or not
    UNWIND [x IN ranked WHERE x.fact AND x.cosine >= $threshold][..$fact_k] AS x
    RETURN x.r AS r, 1 AS hops, [{source: startNode(x.r).name, relationship: type(x.r), destination: endNode(x.r).name}] AS path,
           0.0 AS fulltext, 0.0 AS seed
  }
  RETURN r, hops, path, fulltext, seed
}
WITH r, hops, path, fulltext, seed
ORDER BY hops
WITH r, min(hops) AS hops, head(collect(path)) AS path, max(fulltext) AS fulltext, max(seed) AS seed
WITH r, hops, path, startNode(r) AS s, endNode(r) AS d, fulltext, seed,
     CASE WHEN size(r.fact_embedding) = size($embedding) THEN $fact_norm * (2 * vector.similarity.cosine(r.fact_embedding, $fact_embedding) - 1) + $fact_shift
          ELSE 0.0 END AS vector
WHERE true /* relation filter */
WITH r, hops, path, s, d, vector, fulltext, seed,
     reduce(best = 0.0, score IN [vector, fulltext, seed] | CASE WHEN score > best THEN score ELSE best END) AS best
// times as ISO text (toString): the driver hydrates DateTime values in pure Python
RETURN r {.id, .mentions, .provenance, .fact, .retired_by, valid_at: toString(r.valid_at), invalid_at: toString(r.invalid_at),
          created_at: toString(r.created_at), updated_at: toString(r.updated_at), expired_at: toString(r.expired_at)} AS rel,
       type(r) AS relationship, s.id AS source_id, s.name AS source, d.id AS destination_id, d.name AS destination,
       s.entity_type AS source_type, d.entity_type AS destination_type,
       [k IN keys(s) WHERE k STARTS WITH 'attr_' | [k, s[k]]] AS source_attrs,
       [k IN keys(d) WHERE k STARTS WITH 'attr_' | [k, d[k]]] AS destination_attrs,
       vector, fulltext, seed, hops, path
ORDER BY best DESC, hops, r.created_at, r.seq, r.id
LIMIT $relation_limit
