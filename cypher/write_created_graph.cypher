// A batch of create-only graph writes in one statement (bulk_graph.py decides which writes qualify:
// every entity new and named once in the batch, relations and mentions only among entities the batch
// creates (this write or an earlier one), memory facts ADD only, no invalidation, message or attribute). Per write, the same
// nodes, relationships and properties as write_graph.cypher, without its relation lookup: a new
// entity has no current relation to bump, so nothing expands a hub's relationships.
// Entities are MERGEd on (scope, canonical) like write_graph; one that matched a stored node
// (mentions > 0: every stored entity has at least one) is counted in `existing`, and the caller
// rolls the batch back and writes it through write_graph instead (an exact fallback).
// `missing` counts relations and mentions whose endpoints were not found (the same fallback).
// Returns one row per scope of the batch: its entity count and whether it is partitioned.
// Parameters: $writes (list of write_graph.cypher's parameter maps: scope, ids, scope_ids, at,
//   add_id, entities, relations, memories, idempotency_key; with every time as ISO-8601 text, read
//   with datetime(), which keeps null), $scopes (the batch's scope keys)
// the batch's scopes' new versions first (their (:ScopeVersion) nodes: stores/neo4j/scope_cache.py),
// in this statement's transaction, so a process's cached relation search sees the write at its next search
CALL () {
  UNWIND $scopes AS scope
  MERGE (v:ScopeVersion {scope: scope})
  SET v.version = randomUUID()
}
UNWIND $writes AS w
WITH w, datetime(w.at) AS at
CALL (w, at) {
  UNWIND w.entities AS x
  MERGE (e:Entity {scope: w.scope, canonical: x.canonical})
  ON CREATE SET e += w.scope_ids, e.id = x.id, e.name = x.name, e.entity_type = x.entity_type,
                e.mentions = 0, e.created_at = at, e.seq = x.seq
  WITH w, x, e, e.mentions = 0 AS created
  CALL (w, x, e, created) {
    WITH * WHERE created
    CALL db.create.setNodeVectorProperty(e, 'embedding', x.embedding)
    OPTIONAL MATCH (p:ScopePartition {scope: w.scope})
    FOREACH (label IN CASE WHEN p IS NULL THEN [] ELSE [p.label] END | SET e:$(label))
    WITH e, x
    WHERE x.label IS NOT NULL
    SET e:$(x.label)
  }
  SET e.mentions = e.mentions + 1, e.updated_at = at
  RETURN sum(CASE WHEN created THEN 0 ELSE 1 END) AS existing
}
CALL (w, at, existing) {
  UNWIND CASE WHEN existing = 0 THEN w.relations ELSE [] END AS x
  // the hints keep the planner off the scope index (a scan of the scope per relation: quadratic)
  OPTIONAL MATCH (s:Entity {id: x.source_id}) USING INDEX s:Entity(id) WHERE s.scope = w.scope
  OPTIONAL MATCH (d:Entity {id: x.destination_id}) USING INDEX d:Entity(id) WHERE d.scope = w.scope
  CALL (w, at, x, s, d) {
    WITH * WHERE s IS NOT NULL AND d IS NOT NULL
    CREATE (s)-[r:$(x.type)]->(d)
    SET r += w.scope_ids, r.id = x.id, r.scope = w.scope, r.ids = w.ids, r.valid_at = datetime(x.valid_at), r.invalid_at = datetime(x.invalid_at),
        r.created_at = at, r.updated_at = at, r.mentions = 1, r.provenance = [w.add_id],
        r.seq = x.seq
    WITH * WHERE x.fact_embedding IS NOT NULL
    SET r.fact = x.fact
    WITH r, x
    CALL db.create.setRelationshipVectorProperty(r, 'fact_embedding', x.fact_embedding)
  }
  RETURN sum(CASE WHEN s IS NULL OR d IS NULL THEN 1 ELSE 0 END) AS missing_ends
}
CALL (w, at, existing) {
  UNWIND CASE WHEN existing = 0 THEN w.memories ELSE [] END AS x
  OPTIONAL MATCH (known:Memory {id: x.id})
  CALL (w, at, x, known) {
    WITH * WHERE known IS NULL
    CREATE (m:Memory {id: x.id})
    SET m += w.scope_ids, m += x.meta, m.scope = w.scope, m.text = x.text, m.hash = x.hash,
        m.metadata = x.metadata, m.role = x.role, m.created_at = at, m.updated_at = at, m.seq = x.seq,
        m.expires_at = datetime(x.expires_at), m.valid_at = coalesce(datetime(x.valid_at), at),
        m.said_at = datetime(x.said_at), m.turn = x.turn, m.times = x.times,
        m.time_from = datetime(x.time_from), m.time_to = datetime(x.time_to)
    WITH w, m, x
    CALL db.create.setNodeVectorProperty(m, 'embedding', x.embedding)
    OPTIONAL MATCH (p:ScopePartition {scope: w.scope})
    FOREACH (label IN CASE WHEN p IS NULL THEN [] ELSE [p.memory_label] END | SET m:$(label))
    WITH w, m, x
    UNWIND x.mentions AS ref
    OPTIONAL MATCH (e:Entity {id: ref.id}) USING INDEX e:Entity(id) WHERE e.scope = w.scope
    CALL (m, e) {
      WITH * WHERE e IS NOT NULL
      MERGE (m)-[:MENTIONS]->(e)
    }
    RETURN sum(CASE WHEN e IS NULL THEN 1 ELSE 0 END) AS missing_mentions
  }
  RETURN sum(missing_mentions) AS missing_mentions
}
CALL (w, at) {
  WITH w.idempotency_key AS key
  WHERE key IS NOT NULL
  CREATE (:ImportKey {key: key, scope: w.scope, add_id: w.add_id, at: at})
}
WITH sum(existing) AS existing, sum(missing_ends + missing_mentions) AS missing
UNWIND $scopes AS scope
CALL (scope) {
  MATCH (n:Entity) WHERE n.scope = scope
  RETURN count(n) AS scope_size
}
OPTIONAL MATCH (partition:ScopePartition {scope: scope})
RETURN existing, missing, scope, scope_size, partition IS NOT NULL AS partitioned
