// The scope's memories, oldest first; live ones only unless $include_deleted. The placeholder
// "true /* memory filter */" is replaced by the compiled filter (graphmem.stores.neo4j.filters).
// Parameters: $scope, $include_deleted, $limit, $now (retention: expires_at <= $now is invisible),
//             the filter's (fm_0, ...)
MATCH (m:Memory)
WHERE m.scope = $scope AND ($include_deleted OR m.deleted_at IS NULL)
  AND (m.expires_at IS NULL OR $now < m.expires_at) AND true /* memory filter */
RETURN m {.id, .text, .hash, .user_id, .agent_id, .run_id, .metadata, .role, .created_at, .updated_at, .said_at, .turn, .times,
          .deleted_at, .expires_at, .valid_at, .invalid_at} AS memory
ORDER BY m.created_at, m.seq, m.id
LIMIT $limit
