// The scope's entity-name and relation-fact vectors with what the relation half of search ranks
// them by (stores/neo4j/relcache.py), in one read: its version first (bump_scope_version.cypher),
// so a write committed while the rest is read makes the next search load again. Times as
// [epoch seconds, nanosecond] (exact comparisons in the client). Every relation of the scope
// between two of its entities, whatever its type (search_graph.cypher's scan).
// Parameters: $scope
OPTIONAL MATCH (v:ScopeVersion {scope: $scope})
WITH v.version AS version
CALL () {
  MATCH (n:Entity)
  WHERE n.scope = $scope
  RETURN collect([n.id, n.embedding, n.canonical]) AS entities
}
CALL () {
  MATCH (s:Entity)-[r]->(d:Entity)
  WHERE s.scope = $scope AND r.scope = $scope
  RETURN collect([elementId(r), r.id, s.id, d.id, r.fact_embedding, toLower(r.fact), r.seq,
                  [r.created_at.epochSeconds, r.created_at.nanosecond], [r.expired_at.epochSeconds, r.expired_at.nanosecond],
                  [r.valid_at.epochSeconds, r.valid_at.nanosecond], [r.invalid_at.epochSeconds, r.invalid_at.nanosecond]]) AS relations
}
RETURN version, entities, relations
