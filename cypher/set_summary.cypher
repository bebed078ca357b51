// Store the scope's rolling summary as a (:Summary) node of its own. An add locks the scope's
// (:Conversation) while it logs messages; a summary never touches that node, so an add never waits for
// a summary, nor a summary for an add. The stored summary is the one covering the most messages
// (through); this one is created only when it covers more than every stored one, which it then
// replaces: a late, older summary never overwrites a newer one. (A summary kept on the conversation
// node by an older graphmem is still read, see conversation.cypher, until a new one is stored.)
// Parameters: $scope, $scope_ids, $text, $through_seq, $at
OPTIONAL MATCH (old:Summary)
WHERE old.scope = $scope
WITH collect(old) AS stored
WITH stored, all(s IN stored WHERE s.through < $through_seq) AS newer
CALL (stored, newer) {
  WITH * WHERE newer
  CREATE (s:Summary {scope: $scope})
  SET s += $scope_ids, s.text = $text, s.through = $through_seq, s.updated_at = $at
  FOREACH (old IN stored | DELETE old)
}
RETURN newer
