// Remove the scope's entities with their relations; returns how many entities were removed.
// Parameters: $scope
MATCH (n:Entity)
WHERE n.scope = $scope
DETACH DELETE n
RETURN count(*) AS deleted
