// purpose: what changed in a scope between two dates: relations graphmem learned (created_at) or retired (expired_at) at or after $from and before $to
// parameters: $user_id, $agent_id, $run_id (null for the ids that are not part of the scope), $from, $to (ISO-8601 dates or date-times, e.g. "2024-06-01")
WITH $user_id AS user_id, $agent_id AS agent_id, $run_id AS run_id, $from AS since, $to AS until
MATCH (s:Entity)-[r]->(d:Entity)
WHERE coalesce(s.user_id, '') = coalesce(user_id, '')
  AND coalesce(s.agent_id, '') = coalesce(agent_id, '')
  AND coalesce(s.run_id, '') = coalesce(run_id, '')
  AND r.scope = s.scope AND d.scope = s.scope
UNWIND [['learned', r.created_at], ['retired', r.expired_at]] AS event
WITH s, r, d, event[0] AS change, event[1] AS at, datetime(since) AS since, datetime(until) AS until
WHERE at >= since AND at < until
RETURN at, change, s.name AS source, type(r) AS relationship, d.name AS destination,
       r.valid_at AS valid_from, r.invalid_at AS valid_until, r.id AS relation_id
ORDER BY at, change, relation_id
