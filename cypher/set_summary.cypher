// Store the scope's rolling summary on the scope's one (:Summary) node (summary_scope_unique). An add
// locks the scope's (:Conversation) while it logs messages; a summary never touches that node, so an
// add never waits for a summary, nor a summary for an add. The stored summary is the one covering the
// most messages (through): this one replaces it only when it covers more, so a late, older summary
// never overwrites a newer one. MERGE on the constrained scope makes concurrent first summaries meet
// on one node; the SET takes the node's write lock before its through is read, so concurrent
// summaries queue there and each compares with what the one before it committed. (A summary kept on
// the conversation node by an older graphmem is still read, see conversation.cypher, until a new one
// is stored.)
// Parameters: $scope, $scope_ids, $text, $through_seq, $at
MERGE (s:Summary {scope: $scope})
SET s += $scope_ids
WITH s, s.through IS NULL OR s.through < $through_seq AS newer
CALL (s, newer) {
  WITH * WHERE newer
  SET s.text = $text, s.through = $through_seq, s.updated_at = $at
}
RETURN newer
