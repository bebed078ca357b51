// A batch of verbatim adds (infer=False) in one statement and one transaction: per add, its memory
// facts (ADD only, fresh ids), its messages appended to the scope's conversation log (trimmed to the
// newest keep_messages, once per scope: $trims) and its idempotency key. Rows are processed in list
// order, so adds of one scope keep their order and their message seqs. The same nodes and properties as write_graph.cypher.
// Datetimes arrive as ISO-8601 strings (cheaper to send than Bolt DateTimes; neo4j/bulk.py) and are
// stored as DateTimes; datetime(null) is null.
// A key that exists already fails the uniqueness rule and rolls the whole batch back (the caller
// asked imported_keys first, so that only happens when two importers race).
// Parameters: $adds (list of {scope, scope_ids, at, add_id, key,
//   memories: list of {id, text, hash, embedding, metadata, meta, role, expires_at, seq, valid_at,
//                      said_at, turn, times, time_from, time_to},
//   messages: list of {offset, role, content, timestamp, expires_at}}),
//   $trims (list of {scope, keep}: each scope that got messages, with its last add's keep_messages >= 0)
UNWIND $adds AS a
WITH a, datetime(a.at) AS at
CALL (a, at) {
  UNWIND a.memories AS x
  CREATE (m:Memory {id: x.id})
  SET m += a.scope_ids, m += x.meta, m.scope = a.scope, m.text = x.text, m.hash = x.hash,
      m.metadata = x.metadata, m.role = x.role, m.created_at = at, m.updated_at = at, m.seq = x.seq,
      m.expires_at = datetime(x.expires_at), m.valid_at = coalesce(datetime(x.valid_at), at),
      m.said_at = datetime(x.said_at), m.turn = x.turn, m.times = x.times,
      m.time_from = datetime(x.time_from), m.time_to = datetime(x.time_to)
  WITH m, x, a
  CALL db.create.setNodeVectorProperty(m, 'embedding', x.embedding)
  OPTIONAL MATCH (p:ScopePartition {scope: a.scope})
  FOREACH (label IN CASE WHEN p IS NULL THEN [] ELSE [p.memory_label] END | SET m:$(label))
}
CALL (a) {
  WITH a, size(a.messages) AS appended
  WHERE appended > 0
  MERGE (c:Conversation {scope: a.scope})
  ON CREATE SET c += a.scope_ids
  SET c.last_seq = coalesce(c.last_seq, 0) + appended
  WITH a, c, c.last_seq - appended AS before
  CALL (a, c, before) {
    UNWIND a.messages AS x
    CREATE (c)-[:HAS_MESSAGE]->(:Message {scope: a.scope, seq: before + x.offset, add_id: a.add_id, role: x.role,
                                          content: x.content, timestamp: datetime(x.timestamp),
                                          expires_at: datetime(x.expires_at)})
  }
}
CALL (a, at) {
  WITH a, at WHERE a.key IS NOT NULL
  CREATE (:ImportKey {key: a.key, scope: a.scope, add_id: a.add_id, at: at})
}
WITH count(a) AS adds
// the log trimmed once per scope, after all of the batch's messages: the same end state as a trim
// after each add (one Memory's adds all keep the same number), without re-reading a long log per add
CALL (adds) {
  UNWIND $trims AS t
  MATCH (c:Conversation {scope: t.scope})
  MATCH (old:Message)
  WHERE old.scope = t.scope AND old.seq <= c.last_seq - t.keep
  DETACH DELETE old
}
RETURN adds
