// One memory by id, whatever its scope, soft-deleted ones too (no row when it does not exist).
// $owners (null: anyone's) keeps only a memory whose user_id is one of $owners.users or starts
// with one of $owners.prefixes (a server's tenant key), tested on the index hit before any other
// property is read: another tenant's id costs what an unknown id costs.
// Parameters: $id, $owners
MATCH (m:Memory {id: $id})
WHERE $owners IS NULL OR m.user_id IN $owners.users OR any(p IN $owners.prefixes WHERE m.user_id STARTS WITH p)
RETURN m {.id, .text, .hash, .user_id, .agent_id, .run_id, .metadata, .role, .created_at, .updated_at, .said_at, .turn, .times,
          .deleted_at, .expires_at, .valid_at, .invalid_at} AS memory
