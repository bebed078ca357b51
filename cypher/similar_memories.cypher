// The memory-update stage's candidates, in one query (one row):
// similar: for each of $embeddings, the $top_k live memories of the scope most similar to it by exact
// cosine, best first (ties: oldest first), as {i, cosine, memory};
// mentioning: the live memories of the scope that MENTION any entity of $entity_ids, newest first,
// at most $mention_limit (an index seek per entity id, then the MENTIONS links).
// Every memory map carries ``mentions``: the ids of the entities it MENTIONS.
//
// The same two plans as match_entities.cypher: a scope of at most $scan_limit memories is read once
// and compared exactly with every embedding; a larger one asks the global vector index for k
// neighbours oversampled by total / scope size (capped at $max_k), keeps the scope's live ones and
// rescores them exactly. vector.similarity.cosine reports (1 + cosine) / 2: converted back to cosine.
//
// A partitioned scope (partition_label.cypher) is asked through its own memory index with k = 2 ×
// top_k (soft-deleted memories share that index).
// "true /* memory filter */" is replaced by the ids the scope names beyond its owner (graphmem.filters.scoped).
// Parameters: $scope, $embeddings, $top_k, $scan_limit, $max_k, $entity_ids, $mention_limit,
//             $now (retention: expires_at <= $now is invisible), the filter's (fm_0, ...)
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
    AND true /* memory filter */
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
    WITH node AS m WHERE m.scope = $scope AND m.deleted_at IS NULL AND (m.expires_at IS NULL OR $now < m.expires_at)
      AND true /* memory filter */
    RETURN m, m.embedding AS stored
  }
  WITH m, stored WHERE size(stored) = size(embedding)
  WITH m, coalesce(2 * vector.similarity.cosine(stored, embedding) - 1, 0.0) AS cosine
  ORDER BY cosine DESC, m.created_at, m.seq, m.id
  LIMIT $top_k
  RETURN m, cosine
}
WITH i, m, cosine
ORDER BY i, cosine DESC, m.created_at, m.seq, m.id
WITH collect({i: i, cosine: cosine, memory: m {.id, .text, .hash, .user_id, .agent_id, .run_id, .metadata, .role,
  .created_at, .updated_at, .said_at, .turn, .times, .deleted_at, .expires_at, .valid_at, .invalid_at,
  mentions: [(m)-[:MENTIONS]->(e:Entity) | e.id]}}) AS similar
CALL () {
  UNWIND $entity_ids AS entity_id
  MATCH (e:Entity {id: entity_id})<-[:MENTIONS]-(m:Memory)
  WHERE e.scope = $scope AND m.scope = $scope AND m.deleted_at IS NULL AND (m.expires_at IS NULL OR $now < m.expires_at)
    AND true /* memory filter */
  WITH DISTINCT m
  ORDER BY m.created_at DESC, m.seq DESC, m.id
  LIMIT $mention_limit
  RETURN collect(m {.id, .text, .hash, .user_id, .agent_id, .run_id, .metadata, .role, .created_at, .updated_at,
    .said_at, .turn, .times, .deleted_at, .expires_at, .valid_at, .invalid_at,
    mentions: [(m)-[:MENTIONS]->(x:Entity) | x.id]}) AS mentioning
}
RETURN similar, mentioning
