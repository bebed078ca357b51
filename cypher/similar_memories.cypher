// For each of $embeddings, the $top_k live memories of the scope most similar to it by exact cosine,
// best first (ties: oldest first); every embedding in this one query. One row per (i, memory).
//
// The same two plans as match_entities.cypher: a scope of at most $scan_limit memories is read once
// and compared exactly with every embedding; a larger one asks the global vector index for k
// neighbours oversampled by total / scope size (capped at $max_k), keeps the scope's live ones and
// rescores them exactly. vector.similarity.cosine reports (1 + cosine) / 2: converted back to cosine.
//
// A partitioned scope (partition_label.cypher) is asked through its own memory index with k = 2 ×
// top_k (soft-deleted memories share that index).
// Parameters: $scope, $embeddings, $top_k, $scan_limit, $max_k, $now (retention: expires_at <= $now is invisible)
CALL () {
  MATCH (m:Memory) WHERE m.scope = $scope
  RETURN count(m) AS scope_size
}
CALL () {
  MATCH (m:Memory)
  RETURN count(m) AS total
}
CALL () {
  OPTIONAL MATCH (p:ScopePartition {scope: $scope})
  RETURN p.memory_index AS partition_index
}
CALL (scope_size) {
  // the plan's guard sits in the seek value: a WHERE alone would be checked after the seek
  MATCH (m:Memory)
  WHERE m.scope = CASE WHEN scope_size <= $scan_limit THEN $scope END AND m.deleted_at IS NULL
    AND (m.expires_at IS NULL OR $now < m.expires_at)
  RETURN collect({node: m, embedding: m.embedding}) AS scanned
}
UNWIND range(0, size($embeddings) - 1) AS i
WITH i, $embeddings[i] AS embedding, scope_size, total, scanned, partition_index
CALL (embedding, scope_size, total, scanned, partition_index) {
  CALL (embedding, scope_size, total, scanned, partition_index) {
    UNWIND scanned AS row
    RETURN row.node AS m, row.embedding AS stored
    UNION ALL
    WITH * WHERE scope_size > $scan_limit
    WITH embedding, toInteger(ceil(toFloat($top_k) * total / CASE WHEN scope_size > 0 THEN scope_size ELSE 1 END)) AS wanted, partition_index
    CALL db.index.vector.queryNodes(
      coalesce(partition_index, 'memory_embedding'),
      CASE WHEN partition_index IS NOT NULL THEN 2 * $top_k WHEN wanted > $max_k THEN $max_k ELSE wanted END, embedding)
    YIELD node
    WITH node WHERE node.scope = $scope AND node.deleted_at IS NULL AND (node.expires_at IS NULL OR $now < node.expires_at)
    RETURN node AS m, node.embedding AS stored
  }
  WITH m, stored WHERE size(stored) = size(embedding)
  WITH m, coalesce(2 * vector.similarity.cosine(stored, embedding) - 1, 0.0) AS cosine
  ORDER BY cosine DESC, m.created_at, m.seq, m.id
  LIMIT $top_k
  RETURN m, cosine
}
RETURN i, m {.id, .text, .hash, .user_id, .agent_id, .run_id, .metadata, .role, .created_at, .updated_at, .said_at, .turn, .times,
             .deleted_at} AS memory, cosine
ORDER BY i, cosine DESC, m.created_at, m.seq, m.id
