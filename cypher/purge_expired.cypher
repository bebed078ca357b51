// Retention: remove up to $batch memory facts and up to $batch logged messages whose expires_at is
// at or before $now (the caller's clock), for good. Expired items are invisible to reads already;
// this frees them. Returns the removed memory ids (to scrub the history log) and the message count.
// Parameters: $now, $batch
CALL () {
  MATCH (m:Memory)
  WHERE m.expires_at <= $now
  WITH m LIMIT $batch
  WITH collect(m) AS gone
  WITH gone, [m IN gone | m.id] AS memory_ids
  FOREACH (m IN gone | DETACH DELETE m)
  RETURN memory_ids
}
CALL () {
  MATCH (m:Message)
  WHERE m.expires_at <= $now
  WITH m LIMIT $batch
  DETACH DELETE m
  RETURN count(*) AS messages
}
RETURN memory_ids, messages
