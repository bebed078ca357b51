// Current relations (not invalidated, not expired) of the scope touching any of the given entities.
// The UNION runs one index seek per direction instead of an OR the planner cannot index.
// The placeholder "true /* relation filter */" is replaced by the ids the scope names beyond its
// owner (graphmem.filters.scoped): a user's run sees that run's relations.
// Parameters: $scope, $ids, the filter's (fr_0, ...)
CALL () {
  MATCH (s:Entity)-[r]->(d:Entity)
  WHERE s.id IN $ids AND s.scope = $scope
  RETURN s, r, d
  UNION
  MATCH (s:Entity)-[r]->(d:Entity)
  WHERE d.id IN $ids AND d.scope = $scope
  RETURN s, r, d
}
WITH s, r, d
WHERE r.scope = $scope AND r.invalid_at IS NULL AND r.expired_at IS NULL AND true /* relation filter */
RETURN r {.id, .valid_at, .invalid_at, .created_at, .updated_at, .expired_at, .mentions, .provenance, .fact, .retired_by} AS rel,
       type(r) AS relationship, s.id AS source_id, s.name AS source, d.id AS destination_id, d.name AS destination
ORDER BY r.created_at, r.seq, r.id
