// The scope's memories, oldest first; live ones only unless $include_deleted. The placeholder
// "true /* memory filter */" is replaced by the compiled filter (graphmem.stores.neo4j.filters).
// Parameters: $scope, $include_deleted, $limit, $now (retention: expires_at <= $now is invisible),
//             the filter's (fm_0, ...)
MATCH (m:Memory)
WHERE m.scope = $scope AND ($include_deleted OR m.deleted_at IS NULL)
  AND (m.expires_at IS NULL OR $now < m.expires_at) AND true /* memory filter */
// times as ISO text, as in get_all.cypher
RETURN m {.id, .text, .hash, .user_id, .agent_id, .run_id, .metadata, .role, .turn, .times,
          created_at: toString(m.created_at), updated_at: toString(m.updated_at), said_at: toString(m.said_at),
          deleted_at: toString(m.deleted_at), expires_at: toString(m.expires_at), valid_at: toString(m.valid_at),
          invalid_at: toString(m.invalid_at)} AS memory
ORDER BY m.created_at, m.seq, m.id
LIMIT $limit
