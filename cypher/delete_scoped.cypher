// Remove what a scope naming ids beyond its owner wrote (a user's run, an agent of a user): the
// memories and relations of the partition written with those ids. Entities, shared by the owner's
// scopes, stay; so does the owner's conversation log. The placeholders are replaced by those ids
// (graphmem.filters.scoped). Returns 0 entities removed, like delete_all's count.
// Parameters: $scope, the filters' (fm_0, fr_0, ...)
// the scope's new version first (its (:ScopeVersion) node: stores/neo4j/scope_cache.py), in this
// statement's transaction, so a process's cached relation search sees the write at its next search
CALL () {
  MERGE (v:ScopeVersion {scope: $scope})
  SET v.version = randomUUID()
}
CALL () {
  MATCH (m:Memory)
  WHERE m.scope = $scope AND true /* memory filter */
  DETACH DELETE m
  RETURN count(*) AS memories
}
CALL () {
  MATCH (s:Entity)-[r]->(d:Entity)
  WHERE s.scope = $scope AND r.scope = $scope AND true /* relation filter */
  DELETE r
  RETURN count(*) AS relations
}
RETURN 0 AS deleted
