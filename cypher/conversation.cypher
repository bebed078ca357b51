// The scope's conversation log in one query: the newest $limit messages (returned newest first; the
// caller puts them oldest first), the summary with its counters, and adds_since_summary: how many
// distinct adds logged the kept messages newer than the summary. No conversation: null and zeros.
// The summary is the scope's (:Summary) node (set_summary.cypher); a summary an older graphmem kept
// on the conversation node is read when there is none.
// Times are returned as ISO text (toString): the driver hydrates DateTime values in pure Python.
// Parameters: $scope, $limit, $now (retention: messages with expires_at <= $now are invisible)
OPTIONAL MATCH (c:Conversation {scope: $scope})
CALL () {
  OPTIONAL MATCH (s:Summary)
  WHERE s.scope = $scope
  WITH s
  ORDER BY s.through DESC
  LIMIT 1
  RETURN s
}
WITH c, s, coalesce(s.through, c.summary_through, 0) AS through
CALL () {
  MATCH (m:Message)
  WHERE m.scope = $scope AND (m.expires_at IS NULL OR $now < m.expires_at)
  WITH m
  ORDER BY m.seq DESC
  LIMIT $limit
  RETURN collect(m {.seq, .add_id, .role, .content, timestamp: toString(m.timestamp)}) AS messages
}
CALL (through) {
  MATCH (m:Message)
  WHERE m.scope = $scope AND m.seq > through
  RETURN count(DISTINCT m.add_id) AS adds_since_summary
}
RETURN CASE WHEN c IS NULL AND s IS NULL THEN null
            ELSE {last_seq: c.last_seq, summary: coalesce(s.text, c.summary), summary_through: through,
                  summary_updated_at: toString(coalesce(s.updated_at, c.summary_updated_at))} END AS conversation,
       messages, adds_since_summary
