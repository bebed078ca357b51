// A single-pass add's one read before its model request (GraphStore.add_context), one row:
// relations: the current relations (not invalidated, not expired) of the scope touching a seed, at
//   most $relation_limit: those of the seeds named in or close to the messages first (best score
//   first), then the own node's, newest first. Seeds: the scope's own node ($self_canonical), the
//   $top_k entities most similar to $embedding with cosine >= $threshold (the plans of resolve.cypher:
//   exact scan of a small scope, the scope's own index (a partition), else the oversampled global
//   index) and the $top_k best fulltext hits of $fulltext_terms on names (skipped when null).
// similar: the $similar_k live memories of the scope most similar to $embedding, best first, as
//   {cosine, memory} (the plans of resolve.cypher).
// mentioning: the live memories of the scope that MENTION an endpoint of those relations or a seed,
//   the own node aside (nearly every memory is about the user), newest first, at most $mention_limit.
// Every memory map carries ``mentions``; times are ISO text (toString). "true /* relation filter */"
// and "true /* memory filter */" are replaced by the ids the scope names beyond its owner.
// Parameters: $scope, $self_canonical, $embedding, $threshold, $top_k, $scan_limit, $max_k,
//   $fulltext_terms, $fulltext_scope, $fulltext_limit, $relation_limit, $similar_k, $mention_limit,
//   $now, the filters' (fr_0, ..., fm_0, ...)
CALL () {
  OPTIONAL MATCH (p:ScopePartition {scope: $scope})
  RETURN p.index AS entity_index, p.memory_index AS memory_index
}
CALL (entity_index) {
  CALL () {
    MATCH (n:Entity) WHERE n.scope = $scope
    RETURN count(n) AS scope_size
  }
  CALL () {
    MATCH (n:Entity)
    RETURN count(n) AS total
  }
  CALL (scope_size, total, entity_index) {
    // the guard sits inside the seek value: a WHERE on the branch alone is evaluated after the seek
    MATCH (n:Entity)
    WHERE n.scope = CASE WHEN scope_size <= $scan_limit THEN $scope END
      AND size(n.embedding) = size($embedding)
    WITH n, 2 * vector.similarity.cosine(n.embedding, $embedding) - 1 AS cosine
    WHERE cosine >= $threshold
    RETURN n AS node, cosine AS score
    ORDER BY score DESC, node.id
    LIMIT $top_k
    UNION ALL
    WITH * WHERE scope_size > $scan_limit
    WITH toInteger(ceil(toFloat($top_k) * total / CASE WHEN scope_size > 0 THEN scope_size ELSE 1 END)) AS wanted, entity_index
    CALL db.index.vector.queryNodes(
      coalesce(entity_index, 'entity_embedding'),
      CASE WHEN entity_index IS NOT NULL THEN $top_k WHEN wanted > $max_k THEN $max_k ELSE wanted END, $embedding)
    YIELD node
    WITH node WHERE node.scope = $scope
    WITH node, 2 * vector.similarity.cosine(node.embedding, $embedding) - 1 AS cosine
    WHERE cosine >= $threshold
    RETURN node, cosine AS score
    ORDER BY score DESC, node.id
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
    RETURN node, 1.0 AS score
    UNION ALL
    MATCH (node:Entity {scope: $scope, canonical: $self_canonical})
    RETURN node, 0.0 AS score
  }
  WITH node, max(score) AS score
  RETURN collect({node: node, score: score}) AS seeds
}
CALL (seeds) {
  UNWIND seeds AS seed
  WITH seed.node AS known, seed.score AS score
  CALL (known) {
    MATCH (known)-[r]->(d:Entity)
    RETURN known AS s, r, d
    UNION
    MATCH (s:Entity)-[r]->(known)
    RETURN s, r, known AS d
  }
  WITH s, r, d, max(score) AS score
  WHERE r.scope = $scope AND r.invalid_at IS NULL AND r.expired_at IS NULL AND true /* relation filter */
  WITH s, r, d, score
  ORDER BY score DESC, r.created_at DESC, r.id
  LIMIT $relation_limit
  RETURN collect({rel: r {.id, .mentions, .provenance, .fact, .retired_by, valid_at: toString(r.valid_at), invalid_at: toString(r.invalid_at),
                          created_at: toString(r.created_at), updated_at: toString(r.updated_at),
                          expired_at: toString(r.expired_at)},
                  relationship: type(r), source_id: s.id, source: s.name, destination_id: d.id,
                  destination: d.name}) AS relations
}
CALL (memory_index) {
  CALL () {
    MATCH (m:Memory) WHERE m.scope = $scope
    RETURN count(m) AS scope_size
  }
  CALL () {
    MATCH (m:Memory)
    RETURN count(m) AS total
  }
  CALL (scope_size, total, memory_index) {
    MATCH (m:Memory)
    WHERE m.scope = CASE WHEN scope_size <= $scan_limit THEN $scope END
      AND m.deleted_at IS NULL AND (m.expires_at IS NULL OR $now < m.expires_at)
      AND true /* memory filter */
    RETURN m, m.embedding AS stored
    UNION ALL
    WITH * WHERE scope_size > $scan_limit
    WITH memory_index,
         toInteger(ceil(toFloat($similar_k) * total / CASE WHEN scope_size > 0 THEN scope_size ELSE 1 END)) AS wanted
    CALL db.index.vector.queryNodes(
      coalesce(memory_index, 'memory_embedding'),
      CASE WHEN memory_index IS NOT NULL THEN 2 * $similar_k WHEN wanted > $max_k THEN $max_k ELSE wanted END, $embedding)
    YIELD node
    WITH node AS m WHERE m.scope = $scope AND m.deleted_at IS NULL AND (m.expires_at IS NULL OR $now < m.expires_at)
      AND true /* memory filter */
    RETURN m, m.embedding AS stored
  }
  WITH m, stored WHERE size(stored) = size($embedding)
  WITH m, coalesce(2 * vector.similarity.cosine(stored, $embedding) - 1, 0.0) AS cosine
  ORDER BY cosine DESC, m.created_at, m.seq, m.id
  LIMIT $similar_k
  RETURN collect({cosine: cosine, memory: m {.id, .text, .hash, .user_id, .agent_id, .run_id, .metadata, .role, .turn, .times,
    created_at: toString(m.created_at), updated_at: toString(m.updated_at), said_at: toString(m.said_at),
    deleted_at: toString(m.deleted_at), expires_at: toString(m.expires_at), valid_at: toString(m.valid_at),
    invalid_at: toString(m.invalid_at),
    mentions: [(m)-[:MENTIONS]->(e:Entity) | e.id]}}) AS similar
}
CALL (seeds, relations) {
  UNWIND [s IN seeds | s.node.id] + [r IN relations | r.source_id] + [r IN relations | r.destination_id] AS entity_id
  WITH DISTINCT entity_id
  MATCH (e:Entity {id: entity_id})<-[:MENTIONS]-(m:Memory)
  WHERE e.scope = $scope AND e.canonical <> $self_canonical
    AND m.scope = $scope AND m.deleted_at IS NULL AND (m.expires_at IS NULL OR $now < m.expires_at)
    AND true /* memory filter */
  WITH DISTINCT m
  ORDER BY m.created_at DESC, m.seq DESC, m.id
  LIMIT $mention_limit
  RETURN collect(m {.id, .text, .hash, .user_id, .agent_id, .run_id, .metadata, .role, .turn, .times,
    created_at: toString(m.created_at), updated_at: toString(m.updated_at), said_at: toString(m.said_at),
    deleted_at: toString(m.deleted_at), expires_at: toString(m.expires_at), valid_at: toString(m.valid_at),
    invalid_at: toString(m.invalid_at),
    mentions: [(x)<-[:MENTIONS]-(m) | x.id]}) AS mentioning
}
RETURN relations, similar, mentioning
