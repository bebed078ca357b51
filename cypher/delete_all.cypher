// Remove everything of the scope: entities with their relations, memory facts, logged messages and
// the conversation and its summary, import keys; returns how many entities were removed.
// Parameters: $scope
// the scope's version node goes too (stores/neo4j/scope_cache.py: a scope without one is never
// served from a process's cache), in this statement's transaction
CALL () {
  MATCH (v:ScopeVersion {scope: $scope})
  DELETE v
}
CALL () {
  MATCH (n:Entity)
  WHERE n.scope = $scope
  DETACH DELETE n
  RETURN count(*) AS deleted
}
CALL () {
  MATCH (m:Memory)
  WHERE m.scope = $scope
  DETACH DELETE m
  RETURN count(*) AS memories
}
CALL () {
  MATCH (m:Message)
  WHERE m.scope = $scope
  DETACH DELETE m
  RETURN count(*) AS messages
}
CALL () {
  MATCH (c:Conversation)
  WHERE c.scope = $scope
  DETACH DELETE c
  RETURN count(*) AS conversations
}
CALL () {
  MATCH (s:Summary)
  WHERE s.scope = $scope
  DELETE s
  RETURN count(*) AS summaries
}
CALL () {
  MATCH (k:ImportKey)
  WHERE k.scope = $scope
  DELETE k
  RETURN count(*) AS import_keys
}
CALL () {
  // the partition's (now empty) index stays; a scope that grows again reuses it
  MATCH (p:ScopePartition)
  WHERE p.scope = $scope
  DELETE p
  RETURN count(*) AS partitions
}
RETURN deleted
