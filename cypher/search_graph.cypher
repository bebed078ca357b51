// Relations around the query's seeds, with each relation's best seed scores, in one query.
// Seeds: (a) the $top_k entities most similar to $embedding with cosine >= $threshold (the same
// two plans as match_entities.cypher: exact scan of a small scope, oversampled global index for a
// large one; skipped when $embedding is null); (b) the $top_k best fulltext hits of $fulltext_terms
// on names, pre-filtered by the scope's tokens inside Lucene (boost 0, so the filter does not move
// the score) and normalised to 0..1 by the best hit (skipped when $fulltext_terms is null);
// (c) the entities named exactly in $seed_canonicals.
// Time: by default current relations only. With $as_of: valid in event time at $as_of
// (valid_at <= $as_of < invalid_at, open ends allowed) and not yet expired at $as_of, so a relation
// retired later still shows up when asking about the past. $include_invalidated: no time filter.
// Order: best of the three scores first, then oldest first.
//
// Parameters: $scope, $embedding, $threshold, $top_k, $scan_limit, $max_k, $fulltext_terms,
//             $fulltext_scope, $fulltext_limit, $seed_canonicals, $as_of, $include_invalidated,
//             $relation_limit
CALL () {
  MATCH (n:Entity) WHERE n.scope = $scope
  RETURN count(n) AS scope_size
}
CALL () {
  MATCH (n:Entity)
  RETURN count(n) AS total
}
CALL (scope_size, total) {
  // the guard sits inside the seek value: a WHERE on the branch alone is evaluated after the seek
  MATCH (n:Entity)
  WHERE n.scope = CASE WHEN $embedding IS NOT NULL AND scope_size <= $scan_limit THEN $scope END
    AND size(n.embedding) = size($embedding)
  WITH n, 2 * vector.similarity.cosine(n.embedding, $embedding) - 1 AS cosine
  WHERE cosine >= $threshold
  RETURN n AS node, cosine AS vector, 0.0 AS fulltext, 0.0 AS seed
  ORDER BY vector DESC, node.id
  LIMIT $top_k
  UNION ALL
  WITH * WHERE $embedding IS NOT NULL AND scope_size > $scan_limit
  WITH toInteger(ceil(toFloat($top_k) * total / scope_size)) AS wanted
  CALL db.index.vector.queryNodes(
    'entity_embedding', CASE WHEN wanted > $max_k THEN $max_k ELSE wanted END, $embedding)
  YIELD node
  WITH node WHERE node.scope = $scope
  WITH node, 2 * vector.similarity.cosine(node.embedding, $embedding) - 1 AS cosine
  WHERE cosine >= $threshold
  RETURN node, cosine AS vector, 0.0 AS fulltext, 0.0 AS seed
  ORDER BY vector DESC, node.id
  LIMIT $top_k
  UNION ALL
  WITH * WHERE $fulltext_terms IS NOT NULL
  CALL db.index.fulltext.queryNodes(
    'entity_name', 'name:(' + $fulltext_terms + ') AND scope:"' + $fulltext_scope + '"^0',
    {limit: $fulltext_limit})
  YIELD node, score
  WITH node, score
  WHERE node.scope = $scope
  WITH node, score
  ORDER BY score DESC, node.id
  LIMIT $top_k
  WITH collect({node: node, score: score}) AS hits
  UNWIND hits AS hit
  RETURN hit.node AS node, 0.0 AS vector, hit.score / hits[0].score AS fulltext, 0.0 AS seed
  UNION ALL
  MATCH (n:Entity)
  WHERE n.scope = $scope AND n.canonical IN $seed_canonicals
  RETURN n AS node, 0.0 AS vector, 0.0 AS fulltext, 1.0 AS seed
}
WITH node, max(vector) AS vector, max(fulltext) AS fulltext, max(seed) AS seed
MATCH (node)-[r]-(:Entity)
WHERE r.scope = $scope
  AND CASE
    WHEN $include_invalidated THEN true
    WHEN $as_of IS NULL THEN r.invalid_at IS NULL AND r.expired_at IS NULL
    ELSE (r.valid_at IS NULL OR r.valid_at <= $as_of)
      AND (r.invalid_at IS NULL OR $as_of < r.invalid_at)
      AND (r.expired_at IS NULL OR $as_of < r.expired_at)
  END
WITH r, max(vector) AS vector, max(fulltext) AS fulltext, max(seed) AS seed
WITH r, startNode(r) AS s, endNode(r) AS d, vector, fulltext, seed,
     reduce(best = 0.0, score IN [vector, fulltext, seed] | CASE WHEN score > best THEN score ELSE best END) AS best
RETURN r {.id, .valid_at, .invalid_at, .created_at, .updated_at, .expired_at, .mentions, .provenance} AS rel,
       type(r) AS relationship, s.id AS source_id, s.name AS source, d.id AS destination_id, d.name AS destination,
       vector, fulltext, seed
ORDER BY best DESC, r.created_at, r.seq, r.id
LIMIT $relation_limit
