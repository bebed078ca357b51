// Every entity of the scope, oldest first, without embeddings.
// Parameters: $scope
MATCH (n:Entity)
WHERE n.scope = $scope
RETURN n {.id, .name, .canonical, .entity_type, .mentions, .created_at, .updated_at,
          attrs: [k IN keys(n) WHERE k STARTS WITH 'attr_' | [k, n[k]]]} AS entity
ORDER BY n.created_at, n.seq, n.id
