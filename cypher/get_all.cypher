// Every relation of the scope, oldest first; current ones only unless $include_invalidated.
// Parameters: $scope, $include_invalidated, $limit
MATCH (s:Entity)-[r]->(d:Entity)
WHERE s.scope = $scope AND r.scope = $scope
  AND ($include_invalidated OR (r.invalid_at IS NULL AND r.expired_at IS NULL))
RETURN r {.id, .valid_at, .invalid_at, .created_at, .updated_at, .expired_at, .mentions, .provenance} AS rel,
       type(r) AS relationship, s.id AS source_id, s.name AS source, d.id AS destination_id, d.name AS destination
ORDER BY r.created_at, r.seq, r.id
LIMIT $limit
