// Background population for mem0_compare: synthetic users stored the way the real mem0 1.0.11 graph
// memory stores them (graph_memory.py _add_entities): one node per entity with name, user_id,
// embedding (set with db.create.setNodeVectorProperty), created and mentions; labelled by entity type
// in mem0's default mode, and also :__Entity__ with base_label; relationships typed by the relation.
// Only the data: mem0 writes it with one MERGE per triple.
// Parameters: $users (list of {user_id, names, types, embeddings, relations: list of {s, d, type}}), $base_label
UNWIND $users AS u
CALL (u) {
  UNWIND range(0, size(u.names) - 1) AS i
  CREATE (n {name: u.names[i], user_id: u.user_id, created: timestamp(), mentions: 1})
  SET n:$(u.types[i])
  FOREACH (_ IN CASE WHEN $base_label THEN [1] ELSE [] END | SET n:__Entity__)
  WITH n, i
  CALL db.create.setNodeVectorProperty(n, 'embedding', u.embeddings[i])
  WITH n, i
  ORDER BY i
  WITH collect(n) AS nodes
  UNWIND u.relations AS r
  WITH nodes[r.s] AS a, nodes[r.d] AS b, r
  CREATE (a)-[:$(r.type) {created: timestamp(), mentions: 1}]->(b)
}
