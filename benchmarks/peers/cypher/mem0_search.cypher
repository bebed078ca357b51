// Mem0ᵍ's graph search, one query per entity the LLM extracted from the question (mem0
// graph_memory.py, _search_graph_db, last version before graph memory was dropped): an exact scan
// of the user's nodes comparing every stored embedding with the entity's (no vector index), then
// each matching node's 1-hop neighbourhood both ways. This is Mem0's most favourable set-up, with
// its base label (here :Mem0Entity instead of __Entity__, so graphmem's indexes on :Entity cannot
// help it) and the user_id index Mem0 then creates. Mem0's default (no base label) matches
// (n {user_id: $user_id}) without a label: a scan of every node in the database.
// Parameters: $user_id, $n_embedding, $threshold (Mem0's default 0.7), $limit (Mem0's default 100)
MATCH (n:Mem0Entity {user_id: $user_id})
WHERE n.embedding IS NOT NULL
WITH n, round(2 * vector.similarity.cosine(n.embedding, $n_embedding) - 1, 4) AS similarity
WHERE similarity >= $threshold
CALL (n) {
  MATCH (n)-[r]->(m:Mem0Entity {user_id: $user_id})
  RETURN n.name AS source, elementId(n) AS source_id, type(r) AS relationship, elementId(r) AS relation_id,
         m.name AS destination, elementId(m) AS destination_id
  UNION
  MATCH (n)<-[r]-(m:Mem0Entity {user_id: $user_id})
  RETURN m.name AS source, elementId(m) AS source_id, type(r) AS relationship, elementId(r) AS relation_id,
         n.name AS destination, elementId(n) AS destination_id
}
WITH DISTINCT source, source_id, relationship, relation_id, destination, destination_id, similarity
RETURN source, source_id, relationship, relation_id, destination, destination_id, similarity
ORDER BY similarity DESC
LIMIT $limit
