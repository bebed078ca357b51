// Erasure of a scope: remove everything written with the given ids ($user_id, $agent_id, $run_id;
// null matches any value, at least one is set), like a read of them sees it (a user's runs too):
// logged messages, memory facts, entities with their relations, the conversations with their
// summaries, and the scopes' partition records (which hold the scope key).
// Returns the removed memory ids (to scrub the history log) and counts.
// Parameters: $scope (the partition: Scope.key), $user_id, $agent_id, $run_id, $whole (the ids name the
//   whole partition)
// the scope's version first (stores/neo4j/scope_cache.py), in this statement's transaction: a new one
// when only a run or agent of the partition is forgotten, none when the whole partition is ($whole;
// no node may name a forgotten scope, and a scope without one is never served from a cache)
CALL () {
  MERGE (v:ScopeVersion {scope: $scope})
  SET v.version = randomUUID()
  WITH v WHERE $whole
  DELETE v
}
CALL () {
  MATCH (c:Conversation)
  WHERE c.scope = $scope AND ($user_id IS NULL OR c.user_id = $user_id) AND ($agent_id IS NULL OR c.agent_id = $agent_id)
    AND ($run_id IS NULL OR c.run_id = $run_id)
  RETURN collect(c) AS conversations, collect(c.scope) AS logs
}
CALL (logs) {
  MATCH (m:Message)
  WHERE m.scope IN logs
  DETACH DELETE m
  RETURN count(*) AS messages
}
CALL () {
  MATCH (m:Memory)
  WHERE m.scope = $scope AND ($user_id IS NULL OR m.user_id = $user_id) AND ($agent_id IS NULL OR m.agent_id = $agent_id)
    AND ($run_id IS NULL OR m.run_id = $run_id)
  WITH collect(m) AS gone
  WITH gone, [m IN gone | m.id] AS memory_ids, [m IN gone | m.scope] AS memory_scopes
  FOREACH (m IN gone | DETACH DELETE m)
  RETURN memory_ids, memory_scopes
}
CALL () {
  MATCH (n:Entity)
  WHERE n.scope = $scope AND ($user_id IS NULL OR n.user_id = $user_id) AND ($agent_id IS NULL OR n.agent_id = $agent_id)
    AND ($run_id IS NULL OR n.run_id = $run_id)
  WITH collect(n) AS gone
  WITH gone, [n IN gone | n.scope] AS entity_scopes
  FOREACH (n IN gone | DETACH DELETE n)
  RETURN size(gone) AS entities, entity_scopes
}
CALL (logs, memory_scopes, entity_scopes) {
  MATCH (p:ScopePartition)
  WHERE p.scope IN logs + memory_scopes + entity_scopes
  DELETE p
  RETURN count(*) AS partitions
}
CALL (conversations, logs) {
  FOREACH (c IN conversations | DETACH DELETE c)
  WITH size(conversations) AS summaries
  OPTIONAL MATCH (s:Summary)
  WHERE s.scope IN logs
  DELETE s
  RETURN DISTINCT summaries
}
RETURN memory_ids, entities, messages, summaries
