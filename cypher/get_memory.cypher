// One memory by id, whatever its scope, soft-deleted ones too (no row when it does not exist).
// Parameters: $id
MATCH (m:Memory {id: $id})
RETURN m {.id, .text, .hash, .user_id, .agent_id, .run_id, .metadata, .role, .created_at, .updated_at, .said_at, .turn, .times,
          .deleted_at, .expires_at, .valid_at, .invalid_at} AS memory
