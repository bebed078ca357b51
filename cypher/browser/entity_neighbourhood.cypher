// purpose: one entity's neighbourhood: the entity named $entity (any letter case) and its current relations in both directions
// parameters: $user_id, $agent_id, $run_id (null for the ids that are not part of the scope), $entity (a name or an entity id)
WITH $user_id AS user_id, $agent_id AS agent_id, $run_id AS run_id, $entity AS entity
MATCH (e:Entity)
WHERE coalesce(e.user_id, '') = coalesce(user_id, '')
  AND coalesce(e.agent_id, '') = coalesce(agent_id, '')
  AND coalesce(e.run_id, '') = coalesce(run_id, '')
  AND (e.canonical = toLower(trim(entity)) OR e.name = entity OR e.id = entity)
OPTIONAL MATCH (e)-[r]-(n:Entity)
WHERE r.scope = e.scope AND n.scope = e.scope AND r.invalid_at IS NULL AND r.expired_at IS NULL
RETURN e, r, n
