// The retriever's second memory query (GraphStore.memory_context), one round trip:
// (a) for each hit of $ids (a memory of the scope with a turn: stored from a message), the $before
//     eligible memories just before it and the $after just after it in turn order, within the hit's
//     own stored scope (seeks on the (scope, turn) index); offset -1 is the message just before;
// (b) when $time_from is not null, the $time_k eligible memories of the scope, best cosine first,
//     whose resolved time range [time_from, time_to) overlaps [$time_from, $time_to) (a seek on the
//     (scope, time_from) index; the retriever checks each stored span exactly).
// Eligible, as in search_memories.cypher: live when $as_of is null, else existing at $as_of; every
// $filters entry ({key: "meta.<metadata key>", value}) equal to the memory's property; not expired
// (retention: expires_at <= $now is invisible); written with every id of $narrow (Scope.narrowing: a
// user + run read sees that run's messages only).
// "vector" is the cosine to $embedding, on the same scale as search_memories' (2 * similarity - 1).
// Parameters: $scope, $embedding, $ids, $before, $after, $time_from, $time_to, $time_k, $filters, $narrow, $as_of, $now
CALL () {
  UNWIND range(0, size($ids) - 1) AS i
  MATCH (hit:Memory {id: $ids[i]})
  WHERE hit.scope = $scope AND hit.turn IS NOT NULL
  CALL (hit) {
    MATCH (n:Memory)
    WHERE n.scope = hit.scope AND n.turn < hit.turn
      AND CASE WHEN $as_of IS NULL THEN n.deleted_at IS NULL
               ELSE n.created_at <= $as_of AND (n.deleted_at IS NULL OR $as_of < n.deleted_at) END
      AND (n.expires_at IS NULL OR $now < n.expires_at)
      AND all(f IN $filters WHERE n[f.key] = f.value)
      AND all(k IN keys($narrow) WHERE n[k] = $narrow[k])
    WITH n ORDER BY n.turn DESC LIMIT $before
    WITH collect(n) AS found
    UNWIND range(0, size(found) - 1) AS j
    RETURN found[j] AS n, -(j + 1) AS offset
    UNION ALL
    MATCH (n:Memory)
    WHERE n.scope = hit.scope AND n.turn > hit.turn
      AND CASE WHEN $as_of IS NULL THEN n.deleted_at IS NULL
               ELSE n.created_at <= $as_of AND (n.deleted_at IS NULL OR $as_of < n.deleted_at) END
      AND (n.expires_at IS NULL OR $now < n.expires_at)
      AND all(f IN $filters WHERE n[f.key] = f.value)
      AND all(k IN keys($narrow) WHERE n[k] = $narrow[k])
    WITH n ORDER BY n.turn ASC LIMIT $after
    WITH collect(n) AS found
    UNWIND range(0, size(found) - 1) AS j
    RETURN found[j] AS n, j + 1 AS offset
  }
  WITH i, hit, n, offset ORDER BY i, offset
  // times as ISO text, as in search_memories.cypher (the driver hydrates DateTime in pure Python)
  RETURN collect({of: hit.id, offset: offset, vector: coalesce(2 * vector.similarity.cosine(n.embedding, $embedding) - 1, 0.0),
                  memory: n {.id, .text, .hash, .user_id, .agent_id, .run_id, .metadata, .role, .turn, .times,
                             created_at: toString(n.created_at), updated_at: toString(n.updated_at),
                             deleted_at: toString(n.deleted_at), said_at: toString(n.said_at)}}) AS neighbours
}
CALL () {
  MATCH (m:Memory)
  WHERE m.scope = CASE WHEN $time_from IS NOT NULL AND $time_k > 0 THEN $scope END
    AND m.time_from < $time_to AND m.time_to > $time_from
    AND CASE WHEN $as_of IS NULL THEN m.deleted_at IS NULL
             ELSE m.created_at <= $as_of AND (m.deleted_at IS NULL OR $as_of < m.deleted_at) END
    AND (m.expires_at IS NULL OR $now < m.expires_at)
    AND all(f IN $filters WHERE m[f.key] = f.value)
    AND all(k IN keys($narrow) WHERE m[k] = $narrow[k])
  WITH m, coalesce(2 * vector.similarity.cosine(m.embedding, $embedding) - 1, 0.0) AS vector
  ORDER BY vector DESC, m.turn, m.id
  LIMIT $time_k
  RETURN collect({vector: vector, memory: m {.id, .text, .hash, .user_id, .agent_id, .run_id, .metadata, .role, .turn, .times,
                                             created_at: toString(m.created_at), updated_at: toString(m.updated_at),
                                             deleted_at: toString(m.deleted_at), said_at: toString(m.said_at)}}) AS dated
}
RETURN neighbours, dated
