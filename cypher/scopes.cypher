// The partitions (Scope.key) that hold entities (graphmem reindex walks them one by one).
// Parameters: none
MATCH (n:Entity)
RETURN DISTINCT n.scope AS scope
ORDER BY scope
