// Apply one add in this order: invalidations, entities, relations. One statement, run inside one
// managed write transaction; each CALL sees what the previous ones wrote.
// Returns how many relations could not find their endpoints in the scope: the caller rolls the
// transaction back when that is not 0, so an add is never half written.
//
// Invalidations: relation ids carry no index (Neo4j cannot index a property across relationship
// types). They are looked up around the add's own entities first (where the pipeline found them,
// index-backed); only ids not found there are looked up among all relations of the scope. Only
// current relations of the scope are retired; other ids are ignored.
// Entities: an existing one (is_new false) is found by id in the scope. Any other is MERGEd on
// (scope, canonical): a concurrent add that created the same name first turns ours into a mention
// of theirs. Each stored entity gets one mention per add, however often the add names it.
// Relations find their endpoints by id, else by the canonical name of the entity written with that
// id. A relation (source, type, destination) with a current instance gets one more mention;
// otherwise a new instance is created. The type is a parameter even there (dynamic types).
//
// Parameters: $scope, $scope_ids ({user_id, agent_id, run_id}), $at, $add_id,
//   $invalidations (list of {id, invalid_at}),
//   $entities (list of {id, name, canonical, entity_type, embedding, is_new, seq}),
//   $relations (list of {id, type, source_id, source_canonical, destination_id,
//                        destination_canonical, valid_at, invalid_at, seq})
// seq is the position in the add: with created_at it orders "oldest first" like insertion order.
CALL () {
  WITH [x IN $invalidations | x.id] AS ids
  WHERE size(ids) > 0
  CALL (ids) {
    UNWIND $entities AS e
    MATCH (n:Entity {id: e.id})-[near]-()
    WHERE n.scope = $scope AND near.id IN ids
    RETURN collect(DISTINCT near) AS nearby
  }
  WITH nearby, [id IN ids WHERE none(r IN nearby WHERE r.id = id)] AS rest
  // the fallback's guard sits in the seek value, so the scope is only scanned when needed
  OPTIONAL MATCH (m:Entity)-[far]->()
  WHERE m.scope = CASE WHEN size(rest) > 0 THEN $scope END AND far.id IN rest
  WITH nearby, collect(far) AS farther
  UNWIND nearby + farther AS r
  WITH DISTINCT r
  WHERE r.scope = $scope AND r.invalid_at IS NULL AND r.expired_at IS NULL
  WITH r, [x IN $invalidations WHERE x.id = r.id][0] AS x
  SET r.invalid_at = x.invalid_at, r.expired_at = $at, r.updated_at = $at
  RETURN count(r) AS invalidated
}
CALL () {
  UNWIND $entities AS x
  OPTIONAL MATCH (known:Entity {id: x.id})
  WHERE known.scope = $scope AND NOT x.is_new
  CALL (x, known) {
    WITH * WHERE known IS NOT NULL
    RETURN known AS e
    UNION ALL
    WITH * WHERE known IS NULL
    MERGE (e:Entity {scope: $scope, canonical: x.canonical})
    ON CREATE SET e += $scope_ids, e.id = x.id, e.name = x.name, e.entity_type = x.entity_type,
                  e.mentions = 0, e.created_at = $at, e.seq = x.seq
    WITH e, x
    CALL (e, x) {
      WITH * WHERE e.id = x.id AND e.embedding IS NULL
      CALL db.create.setNodeVectorProperty(e, 'embedding', x.embedding)
    }
    RETURN e
  }
  WITH DISTINCT e
  SET e.mentions = e.mentions + 1, e.updated_at = $at
  RETURN count(e) AS entities
}
CALL () {
  UNWIND $relations AS x
  OPTIONAL MATCH (by_id:Entity {id: x.source_id}) WHERE by_id.scope = $scope
  OPTIONAL MATCH (by_name:Entity {scope: $scope, canonical: x.source_canonical})
  WITH x, coalesce(by_id, by_name) AS s
  OPTIONAL MATCH (by_id:Entity {id: x.destination_id}) WHERE by_id.scope = $scope
  OPTIONAL MATCH (by_name:Entity {scope: $scope, canonical: x.destination_canonical})
  WITH x, s, coalesce(by_id, by_name) AS d
  CALL (x, s, d) {
    WITH * WHERE s IS NOT NULL AND d IS NOT NULL
    OPTIONAL MATCH (s)-[current]->(d)
    WHERE type(current) = x.type AND current.scope = $scope
      AND current.invalid_at IS NULL AND current.expired_at IS NULL
    WITH x, s, d, head(collect(current)) AS current
    CALL (current) {
      WITH * WHERE current IS NOT NULL
      SET current.mentions = current.mentions + 1, current.updated_at = $at,
          current.provenance = CASE WHEN $add_id IN current.provenance THEN current.provenance
                                    ELSE current.provenance + $add_id END
    }
    CALL (x, s, d, current) {
      WITH * WHERE current IS NULL
      CREATE (s)-[r:$(x.type)]->(d)
      SET r.id = x.id, r.scope = $scope, r.valid_at = x.valid_at, r.invalid_at = x.invalid_at,
          r.created_at = $at, r.updated_at = $at, r.mentions = 1, r.provenance = [$add_id],
          r.seq = x.seq
    }
  }
  RETURN sum(CASE WHEN s IS NULL OR d IS NULL THEN 1 ELSE 0 END) AS missing
}
RETURN invalidated, entities, missing
