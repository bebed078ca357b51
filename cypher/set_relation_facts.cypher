// Set the fact text and fact embedding (a vector property) of relation versions of one scope
// (graphmem reindex): every version, current or retired. A relationship id carries no index (Neo4j
// indexes relationship properties per type only), so each is found by expanding from its source
// entity, which is found by id (unique). Ids of other scopes or unknown ones are ignored.
// Parameters: $scope, $facts (list of {id, source_id, fact, embedding})
// the scope's new version first (its (:ScopeVersion) node: stores/neo4j/scope_cache.py), in this
// statement's transaction, so a process's cached relation search sees the write at its next search
CALL () {
  MERGE (v:ScopeVersion {scope: $scope})
  SET v.version = randomUUID()
}
UNWIND $facts AS x
MATCH (s:Entity {id: x.source_id})-[r]->()
WHERE s.scope = $scope AND r.id = x.id AND r.scope = $scope
SET r.fact = x.fact
WITH r, x
CALL db.create.setRelationshipVectorProperty(r, 'fact_embedding', x.embedding)
RETURN count(r) AS updated
