// purpose: the provenance of one relation ($relation_id, from the history view): the adds that asserted it, oldest first, with their messages when the conversation log still holds them (unexpired) as (:Message {scope, seq, add_id, role, content, timestamp}) (else role and message are null)
// parameters: $user_id, $agent_id, $run_id (null for the ids that are not part of the scope), $relation_id
WITH $user_id AS user_id, $agent_id AS agent_id, $run_id AS run_id, $relation_id AS relation_id
MATCH (s:Entity)-[r]->(d:Entity)
WHERE coalesce(s.user_id, '') = coalesce(user_id, '')
  AND coalesce(s.agent_id, '') = coalesce(agent_id, '')
  AND coalesce(s.run_id, '') = coalesce(run_id, '')
  AND r.scope = s.scope AND r.id = relation_id
WITH s, r, d, coalesce(r.provenance, []) AS adds
UNWIND range(0, size(adds) - 1) AS position
WITH s, r, d, position, adds[position] AS add_id
OPTIONAL MATCH (m:Message {add_id: add_id})
WHERE m.scope = s.scope AND (m.expires_at IS NULL OR datetime() < m.expires_at)
RETURN s.name AS source, type(r) AS relationship, d.name AS destination, add_id,
       m.role AS role, m.content AS message, m.timestamp AS said_at
ORDER BY position, m.seq, said_at
