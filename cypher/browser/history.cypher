// purpose: the full history of a scope's relations, invalidated ones included, with when each was true (valid_from..valid_until) and when graphmem knew it (learned_at..retired_at)
// parameters: $user_id, $agent_id, $run_id (null for the ids that are not part of the scope)
WITH $user_id AS user_id, $agent_id AS agent_id, $run_id AS run_id
MATCH (s:Entity)-[r]->(d:Entity)
WHERE coalesce(s.user_id, '') = coalesce(user_id, '')
  AND coalesce(s.agent_id, '') = coalesce(agent_id, '')
  AND coalesce(s.run_id, '') = coalesce(run_id, '')
  AND r.scope = s.scope AND d.scope = s.scope
RETURN CASE WHEN r.invalid_at IS NULL AND r.expired_at IS NULL THEN 'current' ELSE 'invalidated' END AS status,
       s.name AS source, type(r) AS relationship, d.name AS destination,
       r.valid_at AS valid_from, r.invalid_at AS valid_until,
       r.created_at AS learned_at, r.expired_at AS retired_at,
       r.mentions AS mentions, r.id AS relation_id
ORDER BY learned_at, relation_id
