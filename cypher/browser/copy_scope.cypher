// purpose: load one scope's graph read from another store (the embedded one) into this Neo4j for viewing: replaces an earlier copy of the scope, marked by copied_from and a scope of its own; run only when no Neo4j-store data is here (store_data)
// parameters: $scope (the copy's scope key: display-copy: + the scope's key, which no store reads), $entities (list of {labels, properties}), $relations (list of {type, source_id, destination_id, properties})
CALL () {
  MATCH (old:Entity)
  WHERE old.scope = $scope AND old.copied_from IS NOT NULL
  DETACH DELETE old
  RETURN count(*) AS replaced
}
CALL () {
  UNWIND $entities AS x
  CREATE (e:$(x.labels))
  SET e = x.properties
  RETURN count(e) AS entities
}
CALL () {
  UNWIND $relations AS x
  MATCH (s:Entity {id: x.source_id})
  WHERE s.scope = $scope
  MATCH (d:Entity {id: x.destination_id})
  WHERE d.scope = $scope
  CREATE (s)-[r:$(x.type)]->(d)
  SET r = x.properties
  RETURN count(r) AS relations
}
RETURN replaced, entities, relations
