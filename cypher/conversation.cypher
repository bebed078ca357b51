// The scope's conversation log in one query: the newest $limit messages (returned newest first; the
// caller puts them oldest first), the summary with its counters, and adds_since_summary: how many
// distinct adds logged the kept messages newer than the summary. No conversation: null and zeros.
// Parameters: $scope, $limit, $now (retention: messages with expires_at <= $now are invisible)
OPTIONAL MATCH (c:Conversation {scope: $scope})
CALL () {
  MATCH (m:Message)
  WHERE m.scope = $scope AND (m.expires_at IS NULL OR $now < m.expires_at)
  WITH m
  ORDER BY m.seq DESC
  LIMIT $limit
  RETURN collect(m {.seq, .add_id, .role, .content, .timestamp}) AS messages
}
CALL (c) {
  MATCH (m:Message)
  WHERE m.scope = $scope AND m.seq > coalesce(c.summary_through, 0)
  RETURN count(DISTINCT m.add_id) AS adds_since_summary
}
RETURN c {.last_seq, .summary, .summary_through, .summary_updated_at} AS conversation, messages,
       adds_since_summary
