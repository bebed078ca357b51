// The scope's memories, oldest first; live ones only unless $include_deleted.
// Parameters: $scope, $include_deleted, $limit
MATCH (m:Memory)
WHERE m.scope = $scope AND ($include_deleted OR m.deleted_at IS NULL)
RETURN m {.id, .text, .hash, .user_id, .agent_id, .run_id, .metadata, .role, .created_at, .updated_at,
          .deleted_at} AS memory
ORDER BY m.created_at, m.seq, m.id
LIMIT $limit
