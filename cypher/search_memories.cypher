// Memory candidates of the scope for one query: the $top_k eligible memories by cosine to
// $embedding, and the $top_k eligible ones by fulltext on the text ($fulltext_terms, skipped when
// null), merged by id. Each row carries "vector" (the exact cosine, for every candidate) and
// "fulltext" (the Lucene score over the best one among the fulltext top_k, 0..1; 0 elsewhere).
// Order: best of the two first, then candidate order (vector hits by rank, then text hits).
//
// Eligible: live memories when $as_of and $known_at are null. Else (stores.embedded.memories.visible):
// $known_at (transaction time) keeps those held then (created_at <= $known_at < deleted_at);
// $as_of (event time) keeps those true then: valid_at (else created_at) <= $as_of < invalid_at
// (else deleted_at; an end recorded after $known_at was not known then), open end allowed. And the memory filter: the placeholder
// "true /* memory filter */" is replaced by graphmem.stores.neo4j.filters with an expression whose
// values and metadata keys are parameters (fm_0, ...; $filtered says there is one), never query text. Filters and time apply before
// the top_k cut: with filters, or in a scope of at most $scan_limit memories, every eligible memory
// of the scope is compared exactly; otherwise the global vector index is asked for k neighbours
// oversampled by total / scope size (capped at $max_k; an empty scope counts as 1, so a partitioned
// scope without memories divides by nothing) and the scope's eligible ones are rescored.
// Fulltext pre-filters by the scope's tokens inside Lucene (boost 0, so the score is the text's);
// $fulltext_options carries the Lucene hit limit (none when filters make hits scarce).
//
// A partitioned scope (partition_label.cypher) is asked through its own memory index (not scanned,
// whatever its memory count, unless filters are given) with k = 2 ×
// top_k (soft-deleted memories share that index).
// Parameters: $scope, $embedding, $top_k, $scan_limit, $max_k, $fulltext_terms, $fulltext_scope,
//             $fulltext_options, $filtered, $as_of, $known_at, $now (retention: expires_at <= $now is
//             invisible), the filter's (fm_0, ...)
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
WITH scope_size, total, partition_index,
     $filtered OR (scope_size <= $scan_limit AND partition_index IS NULL) AS exact
CALL (scope_size, total, exact, partition_index) {
  // the plan's guard sits in the seek value: a WHERE alone would be checked after the seek
  MATCH (m:Memory)
  WHERE m.scope = CASE WHEN exact THEN $scope END
  RETURN m
  UNION ALL
  WITH * WHERE NOT exact
  WITH toInteger(ceil(toFloat($top_k) * total / CASE WHEN scope_size > 0 THEN scope_size ELSE 1 END)) AS wanted, partition_index
  CALL db.index.vector.queryNodes(
    coalesce(partition_index, 'memory_embedding'),
    CASE WHEN partition_index IS NOT NULL THEN 2 * $top_k WHEN wanted > $max_k THEN $max_k ELSE wanted END, $embedding)
  YIELD node
  WITH node AS m WHERE m.scope = $scope
  RETURN m
}
WITH m
WHERE (m.expires_at IS NULL OR $now < m.expires_at)
  AND CASE WHEN $as_of IS NULL AND $known_at IS NULL THEN m.deleted_at IS NULL
           ELSE ($known_at IS NULL OR (m.created_at <= $known_at AND (m.deleted_at IS NULL OR $known_at < m.deleted_at)))
             AND ($as_of IS NULL OR (coalesce(m.valid_at, m.created_at) <= $as_of AND coalesce(
               $as_of < CASE WHEN m.deleted_at > $known_at THEN null ELSE coalesce(m.invalid_at, m.deleted_at) END, true))) END
  AND true /* memory filter */
  AND size(m.embedding) = size($embedding)
WITH m, coalesce(2 * vector.similarity.cosine(m.embedding, $embedding) - 1, 0.0) AS cosine
ORDER BY cosine DESC, m.created_at, m.seq, m.id
LIMIT $top_k
WITH collect(m) AS by_vector
CALL (by_vector) {
  WITH * WHERE $fulltext_terms IS NOT NULL
  CALL db.index.fulltext.queryNodes(
    'text_fulltext', 'text:(' + $fulltext_terms + ') AND scope:"' + $fulltext_scope + '"^0', $fulltext_options)
  YIELD node, score
  WITH node AS m, score
  WHERE m:Memory AND m.scope = $scope AND (m.expires_at IS NULL OR $now < m.expires_at)
    AND CASE WHEN $as_of IS NULL AND $known_at IS NULL THEN m.deleted_at IS NULL
             ELSE ($known_at IS NULL OR (m.created_at <= $known_at AND (m.deleted_at IS NULL OR $known_at < m.deleted_at)))
               AND ($as_of IS NULL OR (coalesce(m.valid_at, m.created_at) <= $as_of AND coalesce(
                 $as_of < CASE WHEN m.deleted_at > $known_at THEN null ELSE coalesce(m.invalid_at, m.deleted_at) END, true))) END
    AND true /* memory filter */
  WITH m, score
  ORDER BY score DESC, m.created_at, m.seq, m.id
  LIMIT $top_k
  RETURN collect({node: m, score: score}) AS by_text
}
WITH [m IN by_vector | {node: m, text: 0.0}]
     + [hit IN by_text | {node: hit.node, text: CASE WHEN by_text[0].score > 0 THEN hit.score / by_text[0].score ELSE 0.0 END}] AS candidates
UNWIND range(0, size(candidates) - 1) AS i
WITH candidates[i].node AS m, min(i) AS first, max(candidates[i].text) AS fulltext
WITH m, first, fulltext, coalesce(2 * vector.similarity.cosine(m.embedding, $embedding) - 1, 0.0) AS vector
// times as ISO text (toString): the driver hydrates DateTime values in pure Python
RETURN m {.id, .text, .hash, .user_id, .agent_id, .run_id, .metadata, .role, .turn, .times,
          created_at: toString(m.created_at), updated_at: toString(m.updated_at), said_at: toString(m.said_at),
          deleted_at: toString(m.deleted_at), valid_at: toString(m.valid_at), invalid_at: toString(m.invalid_at)}
       AS memory, vector, fulltext
ORDER BY CASE WHEN fulltext > vector THEN fulltext ELSE vector END DESC, first
