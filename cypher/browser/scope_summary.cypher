// purpose: how much of a scope's graph this Neo4j holds (graphmem browse checks it before printing a URL), and how much of it is a display copy made by graphmem browse
// parameters: $scope (the scope key)
MATCH (e:Entity)
WHERE e.scope = $scope
OPTIONAL MATCH (e)-[r]->(:Entity)
WHERE r.scope = $scope
RETURN count(DISTINCT e) AS entities,
       count(DISTINCT CASE WHEN e.copied_from IS NOT NULL THEN e END) AS copied,
       count(r) AS relations,
       count(CASE WHEN r.invalid_at IS NULL AND r.expired_at IS NULL THEN r END) AS current
