// Store the scope's rolling summary when $through_seq is newer than the stored one's (or there is
// none yet); returns whether it was stored. The first SET reads the property it writes, so Cypher
// takes the conversation's write lock before that read: two summaries racing are compared one after
// the other, and a late, older one never overwrites a newer one.
// Parameters: $scope, $scope_ids, $text, $through_seq, $at
MERGE (c:Conversation {scope: $scope})
ON CREATE SET c += $scope_ids
SET c.summary_through = coalesce(c.summary_through, 0)
WITH c, c.summary IS NULL OR $through_seq > c.summary_through AS newer
CALL (c, newer) {
  WITH * WHERE newer
  SET c.summary = $text, c.summary_through = $through_seq, c.summary_updated_at = $at
}
RETURN newer
