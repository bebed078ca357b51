// Bulk load of the benchmark's users as Mem0 would have stored them: one node per entity with
// name, user_id and embedding (Mem0 sets it with db.create.setNodeVectorProperty), relationships
// typed by the relation. Not a Mem0 statement (Mem0 writes one MERGE per triple); only the data.
// Parameters: $users (list of {user_id, names, embeddings, relations: list of {s, d, type}})
UNWIND $users AS u
CALL (u) {
  UNWIND range(0, size(u.names) - 1) AS i
  CREATE (n:Mem0Entity {name: u.names[i], user_id: u.user_id, created: timestamp()})
  WITH n, i
  CALL db.create.setNodeVectorProperty(n, 'embedding', u.embeddings[i])
  WITH n, i
  ORDER BY i
  WITH collect(n) AS nodes
  UNWIND u.relations AS r
  WITH nodes[r.s] AS a, nodes[r.d] AS b, r
  CREATE (a)-[:$(r.type) {created: timestamp()}]->(b)
}
