// purpose: the memories linked to one entity: live, unexpired (:Memory) facts of the scope that MENTION the entity named $entity (any letter case)
// parameters: $user_id, $agent_id, $run_id (null for the ids that are not part of the scope), $entity (a name or an entity id)
WITH $user_id AS user_id, $agent_id AS agent_id, $run_id AS run_id, $entity AS entity
MATCH (e:Entity)
WHERE coalesce(e.user_id, '') = coalesce(user_id, '')
  AND coalesce(e.agent_id, '') = coalesce(agent_id, '')
  AND coalesce(e.run_id, '') = coalesce(run_id, '')
  AND (e.canonical = toLower(trim(entity)) OR e.name = entity OR e.id = entity)
MATCH (m:Memory)-[mention:MENTIONS]->(e)
WHERE m.deleted_at IS NULL AND (m.expires_at IS NULL OR datetime() < m.expires_at)
  AND coalesce(m.user_id, '') = coalesce(user_id, '')
  AND coalesce(m.agent_id, '') = coalesce(agent_id, '')
  AND coalesce(m.run_id, '') = coalesce(run_id, '')
RETURN e, mention, m
ORDER BY m.created_at
