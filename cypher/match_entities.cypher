// Resolve extracted entities against the scope's entities, every candidate in this one query.
// An exact (scope, canonical) match wins (score 1.0); otherwise the most similar entity of the
// scope with cosine >= $threshold; otherwise node is null. One row per candidate, ordered by index.
//
// Why two plans: Neo4j 5.26 has no filtered vector search and the vector index is global, while a
// database may hold 1M entities over 10k scopes. The scope's size is counted through the scope
// index (cheap) and the total comes from the count store. A scope of at most $scan_limit entities
// is read once (nodes and embeddings) and every candidate is compared with it exactly using
// vector.similarity.cosine (a few thousand dot products per candidate). A larger scope
// asks the index for k neighbours oversampled by total / scope size (capped at $max_k) and keeps
// the scope's own; an entity ranked below k globally can then be missed, a bounded trade-off.
// A scope past the store's partition size has a vector index of its own (partition_index.cypher,
// recorded as (:ScopePartition {scope, label, index})), asked for $base_k neighbours directly.
// The index may quantize vectors, so its hits are rescored exactly. vector.similarity.cosine
// reports (1 + cosine) / 2: we convert back to cosine, the unit of $threshold.
//
// Parameters: $scope, $candidates (list of {canonical, embedding}), $threshold, $scan_limit,
//             $base_k, $max_k
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
CALL (scope_size) {
  // the plan's guard sits in the seek value: a WHERE alone would be checked after the seek
  MATCH (n:Entity)
  WHERE n.scope = CASE WHEN scope_size <= $scan_limit THEN $scope END
  RETURN collect({node: n, embedding: n.embedding}) AS scanned
}
UNWIND range(0, size($candidates) - 1) AS i
WITH i, $candidates[i] AS candidate, scope_size, total, scanned, partition_index
OPTIONAL MATCH (exact:Entity {scope: $scope, canonical: candidate.canonical})
CALL (candidate, exact, scope_size, total, scanned, partition_index) {
  CALL (candidate, exact, scope_size, total, scanned, partition_index) {
    UNWIND CASE WHEN exact IS NULL THEN scanned ELSE [] END AS row
    WITH row WHERE size(row.embedding) = size(candidate.embedding)
    RETURN row.node AS n, 2 * vector.similarity.cosine(row.embedding, candidate.embedding) - 1 AS cosine
    UNION ALL
    WITH * WHERE exact IS NULL AND scope_size > $scan_limit
    WITH candidate, toInteger(ceil(toFloat($base_k) * total / CASE WHEN scope_size > 0 THEN scope_size ELSE 1 END)) AS wanted, partition_index
    CALL db.index.vector.queryNodes(
      coalesce(partition_index, 'entity_embedding'),
      CASE WHEN partition_index IS NOT NULL THEN $base_k WHEN wanted > $max_k THEN $max_k ELSE wanted END,
      candidate.embedding)
    YIELD node
    WITH node WHERE node.scope = $scope
    RETURN node AS n, 2 * vector.similarity.cosine(node.embedding, candidate.embedding) - 1 AS cosine
  }
  WITH n, cosine WHERE cosine >= $threshold
  WITH n, cosine
  ORDER BY cosine DESC, n.id
  LIMIT 1
  RETURN collect({node: n, cosine: cosine}) AS similar
}
WITH i, coalesce(exact, similar[0].node) AS n,
     CASE WHEN exact IS NOT NULL THEN 1.0 ELSE similar[0].cosine END AS score
RETURN i, n {.id, .name, .canonical, .entity_type, .mentions, .created_at, .updated_at} AS entity, score
ORDER BY i
