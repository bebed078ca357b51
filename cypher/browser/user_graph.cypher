// purpose: a scope's current graph: the relations that are still true and the entities they connect (invalidated relations, and entities left without a current one, are left out)
// parameters: $user_id, $agent_id, $run_id (null for the ids that are not part of the scope)
WITH $user_id AS user_id, $agent_id AS agent_id, $run_id AS run_id
MATCH (e:Entity)-[r]->(d:Entity)
WHERE coalesce(e.user_id, '') = coalesce(user_id, '')
  AND coalesce(e.agent_id, '') = coalesce(agent_id, '')
  AND coalesce(e.run_id, '') = coalesce(run_id, '')
  AND r.scope = e.scope AND d.scope = e.scope AND r.invalid_at IS NULL AND r.expired_at IS NULL
RETURN e, r, d
