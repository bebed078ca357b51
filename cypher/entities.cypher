// Every entity of the scope, oldest first, without embeddings.
// Parameters: $scope
MATCH (n:Entity)
WHERE n.scope = $scope
// times as ISO text, as in get_all.cypher
RETURN n {.id, .name, .canonical, .entity_type, .mentions, created_at: toString(n.created_at), updated_at: toString(n.updated_at),
          attrs: [k IN keys(n) WHERE k STARTS WITH 'attr_' | [k, n[k]]]} AS entity
ORDER BY n.created_at, n.seq, n.id
