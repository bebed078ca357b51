// One memory by id, whatever its scope, soft-deleted ones too (no row when it does not exist).
// $owners (null: anyone's) keeps only a memory of these owners: its user_id is one of $owners.users
// or starts with one of $owners.prefixes (a server's tenant key), or $owners.any_user; and its
// agent_id / run_id equal $owners.agent_id / $owners.run_id when those are set (an MCP server's
// scope). Tested on the index hit before any other property is read: another tenant's id costs
// what an unknown id costs.
// Parameters: $id, $owners
MATCH (m:Memory {id: $id})
WHERE $owners IS NULL
   OR (($owners.any_user OR m.user_id IN $owners.users OR any(p IN $owners.prefixes WHERE m.user_id STARTS WITH p))
       AND ($owners.agent_id IS NULL OR m.agent_id = $owners.agent_id)
       AND ($owners.run_id IS NULL OR m.run_id = $owners.run_id))
RETURN m {.id, .text, .hash, .user_id, .agent_id, .run_id, .metadata, .role, .created_at, .updated_at, .said_at, .turn, .times,
          .deleted_at, .expires_at, .valid_at, .invalid_at} AS memory
