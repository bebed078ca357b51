// Give every entity of the scope the scope's partition label (dynamic label: a parameter), and,
// when $index is given, record the partition so searches use its index from now on. Run once
// before the index is online and once after recording (idempotent), so an entity created in
// between still gets the label. Returns how many entities carry it.
// Parameters: $scope, $label, $index (null: label only)
CALL () {
  WITH * WHERE $index IS NOT NULL
  MERGE (p:ScopePartition {scope: $scope})
  SET p.label = $label, p.index = $index
}
MATCH (n:Entity)
WHERE n.scope = $scope
SET n:$($label)
RETURN count(n) AS labelled
