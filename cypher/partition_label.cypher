// Give every entity and memory of the scope the scope's partition labels (dynamic labels:
// parameters), and, when $index is given, record the partition so searches use its indexes from
// now on. Run once before the indexes are online and once after recording (idempotent), so nodes
// created in between still get the labels. Returns how many entities carry the label.
// Parameters: $scope, $label, $memory_label, $index (null: label only), $memory_index
CALL () {
  WITH * WHERE $index IS NOT NULL
  MERGE (p:ScopePartition {scope: $scope})
  SET p.label = $label, p.index = $index, p.memory_label = $memory_label, p.memory_index = $memory_index
}
CALL () {
  MATCH (m:Memory)
  WHERE m.scope = $scope
  SET m:$($memory_label)
}
MATCH (n:Entity)
WHERE n.scope = $scope
SET n:$($label)
RETURN count(n) AS labelled
