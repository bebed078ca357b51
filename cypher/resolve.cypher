// An add's reads before its invalidation stage, in one query (one row):
// matches: every extracted entity resolved against the scope's entities, as {i, entity, score}
//   ordered by i. An exact (scope, canonical) match wins (score 1.0); otherwise the most similar
//   entity of the scope with cosine >= $threshold; otherwise entity is null.
// relations: the current relations (not invalidated, not expired) of the scope touching any matched
//   entity, oldest first.
// similar: for each of $embeddings (the add's facts), the $top_k live memories of the scope most
//   similar to it by exact cosine, best first (ties: oldest first), as {i, cosine, memory}.
// mentioning: the live memories of the scope that MENTION any entity of mention_ids, newest first,
//   at most $mention_limit; mention_ids = the matched entities of the candidates marked mention,
//   plus $entity_ids. Every memory map carries ``mentions``: the ids of the entities it MENTIONS.
//
// Vector search, for entities and memories alike: Neo4j 5.26 has no filtered vector search and the
// vector index is global, while a database may hold 1M entities over 10k scopes. The scope's size is
// counted through the scope index (cheap) and the total comes from the count store. A scope of at
// most $scan_limit nodes is read once (nodes and embeddings) and compared exactly with every vector
// using vector.similarity.cosine. A larger scope asks the index for k neighbours oversampled by
// total / scope size (capped at $max_k) and keeps the scope's own (live) ones, rescored exactly; a
// node ranked below k globally can then be missed, a bounded trade-off. A scope past the store's
// partition size has vector indexes of its own (partition_index.cypher, recorded as
// (:ScopePartition {scope, label, index, memory_index})), asked for $base_k entities or 2 × $top_k
// memories directly. vector.similarity.cosine reports (1 + cosine) / 2: converted back to cosine.
// "true /* relation filter */" and "true /* memory filter */" are replaced by the ids the scope
// names beyond its owner (graphmem.filters.scoped): a user's run sees that run's relations and memories.
//
// Times are returned as ISO text (toString): the driver hydrates DateTime values in pure Python.
// Parameters: $scope, $candidates (list of {canonical, embedding, mention}), $threshold, $base_k,
//   $embeddings, $top_k, $entity_ids, $mention_limit, $scan_limit, $max_k,
//   $now (retention: expires_at <= $now is invisible), the filters' (fr_0, ..., fm_0, ...)
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
  CALL (scope_size) {
    // the plan's guard sits in the seek value: a WHERE alone would be checked after the seek
    MATCH (n:Entity)
    WHERE n.scope = CASE WHEN size($candidates) > 0 AND scope_size <= $scan_limit THEN $scope END
    RETURN collect({node: n, embedding: n.embedding}) AS scanned
  }
  UNWIND range(0, size($candidates) - 1) AS i
  WITH i, $candidates[i] AS candidate, scope_size, total, scanned
  OPTIONAL MATCH (exact:Entity {scope: $scope, canonical: candidate.canonical})
  CALL (candidate, exact, scope_size, total, scanned, entity_index) {
    CALL (candidate, exact, scope_size, total, scanned, entity_index) {
      UNWIND CASE WHEN exact IS NULL THEN scanned ELSE [] END AS row
      WITH row WHERE size(row.embedding) = size(candidate.embedding)
      RETURN row.node AS n, 2 * vector.similarity.cosine(row.embedding, candidate.embedding) - 1 AS cosine
      UNION ALL
      WITH * WHERE exact IS NULL AND scope_size > $scan_limit
      WITH candidate, entity_index,
           toInteger(ceil(toFloat($base_k) * total / CASE WHEN scope_size > 0 THEN scope_size ELSE 1 END)) AS wanted
      CALL db.index.vector.queryNodes(
        coalesce(entity_index, 'entity_embedding'),
        CASE WHEN entity_index IS NOT NULL THEN $base_k WHEN wanted > $max_k THEN $max_k ELSE wanted END,
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
  WITH i, candidate, coalesce(exact, similar[0].node) AS n,
       CASE WHEN exact IS NOT NULL THEN 1.0 ELSE similar[0].cosine END AS score
  ORDER BY i
  RETURN collect({i: i, mention: candidate.mention, score: score,
                  entity: n {.id, .name, .canonical, .entity_type, .mentions,
                                created_at: toString(n.created_at), updated_at: toString(n.updated_at)}}) AS found
}
CALL (found) {
  UNWIND [f IN found WHERE f.entity IS NOT NULL | f.entity.id] AS id
  MATCH (known:Entity {id: id})
  WHERE known.scope = $scope
  CALL (known) {
    MATCH (known)-[r]->(d:Entity)
    RETURN known AS s, r, d
    UNION
    MATCH (s:Entity)-[r]->(known)
    RETURN s, r, known AS d
  }
  WITH DISTINCT s, r, d
  WHERE r.scope = $scope AND r.invalid_at IS NULL AND r.expired_at IS NULL AND true /* relation filter */
  WITH s, r, d
  ORDER BY r.created_at, r.seq, r.id
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
  CALL (scope_size) {
    MATCH (m:Memory)
    WHERE m.scope = CASE WHEN size($embeddings) > 0 AND scope_size <= $scan_limit THEN $scope END
      AND m.deleted_at IS NULL AND (m.expires_at IS NULL OR $now < m.expires_at)
      AND true /* memory filter */
    RETURN collect({node: m, embedding: m.embedding}) AS scanned
  }
  UNWIND range(0, size($embeddings) - 1) AS i
  WITH i, $embeddings[i] AS embedding, scope_size, total, scanned
  CALL (embedding, scope_size, total, scanned, memory_index) {
    CALL (embedding, scope_size, total, scanned, memory_index) {
      UNWIND scanned AS row
      RETURN row.node AS m, row.embedding AS stored
      UNION ALL
      WITH * WHERE scope_size > $scan_limit
      WITH embedding, memory_index,
           toInteger(ceil(toFloat($top_k) * total / CASE WHEN scope_size > 0 THEN scope_size ELSE 1 END)) AS wanted
      CALL db.index.vector.queryNodes(
        coalesce(memory_index, 'memory_embedding'),
        CASE WHEN memory_index IS NOT NULL THEN 2 * $top_k WHEN wanted > $max_k THEN $max_k ELSE wanted END, embedding)
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
  RETURN collect({i: i, cosine: cosine, memory: m {.id, .text, .hash, .user_id, .agent_id, .run_id, .metadata, .role, .turn, .times,
    created_at: toString(m.created_at), updated_at: toString(m.updated_at), said_at: toString(m.said_at),
    deleted_at: toString(m.deleted_at), expires_at: toString(m.expires_at), valid_at: toString(m.valid_at),
    invalid_at: toString(m.invalid_at),
    mentions: [(m)-[:MENTIONS]->(e:Entity) | e.id]}}) AS similar
}
CALL (found) {
  UNWIND [f IN found WHERE f.mention AND f.entity IS NOT NULL | f.entity.id] + $entity_ids AS id
  WITH DISTINCT id
  ORDER BY id
  RETURN collect(id) AS mention_ids
}
CALL (mention_ids) {
  UNWIND mention_ids AS entity_id
  MATCH (e:Entity {id: entity_id})<-[:MENTIONS]-(m:Memory)
  WHERE e.scope = $scope AND m.scope = $scope AND m.deleted_at IS NULL AND (m.expires_at IS NULL OR $now < m.expires_at)
    AND true /* memory filter */
  WITH DISTINCT m
  ORDER BY m.created_at DESC, m.seq DESC, m.id
  LIMIT $mention_limit
  RETURN collect(m {.id, .text, .hash, .user_id, .agent_id, .run_id, .metadata, .role, .turn, .times,
    created_at: toString(m.created_at), updated_at: toString(m.updated_at), said_at: toString(m.said_at),
    deleted_at: toString(m.deleted_at), expires_at: toString(m.expires_at), valid_at: toString(m.valid_at),
    invalid_at: toString(m.invalid_at),
    mentions: [(m)-[:MENTIONS]->(x:Entity) | x.id]}) AS mentioning
}
RETURN found AS matches, relations, similar, mentioning, mention_ids
