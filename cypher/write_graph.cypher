// Apply one add in this order: invalidations, entities, relations, memory facts, conversation log.
// One statement, run inside one managed write transaction; each CALL sees what the previous ones wrote.
// Returns how many relations could not find their endpoints in the scope: the caller rolls the
// transaction back when that is not 0, so an add is never half written.
//
// Invalidations: relation ids carry no index (Neo4j cannot index a property across relationship
// types). They are looked up around the add's own entities first (where the pipeline found them,
// index-backed); only ids not found there are looked up among all relations of the scope. Only
// current relations of the scope are retired; other ids are ignored.
// Entities: an existing one (is_new false) is found by id in the scope. Any other is MERGEd on
// (scope, canonical): a concurrent add that created the same name first turns ours into a mention
// of theirs. Each stored entity gets one mention per add, however often the add names it. A created
// entity also gets its display label (label: from a fixed allow-list or a declared ontology type
// name, both validated names, or null), for Browser colours,
// and the scope's partition label when the scope has its own vector index (partition_index.cypher).
// Returns the scope's entity count and whether it is partitioned, so the store can partition a
// scope that grew past its threshold.
// Relations find their endpoints by id, else by the canonical name of the entity written with that
// id. A relation carries its fact (graphmem.schema.facts) and fact_embedding (a vector property) when
// the write has them; a bumped instance without them (written before facts) takes the write's; a
// retirement records the add that retired the version (retired_by), a creation the adds that
// asserted it (provenance: $add_id, or a restored version's own list). A relation (source, type, destination) with a current instance written with the same ids
// ($ids: a user's two runs keep their own instances) gets one more mention;
// otherwise a new instance is created. The type is a parameter even there (dynamic types). A version
// restored from an export (graphmem load) keeps its created_at, and one with expired_at (history) is
// always an instance of its own.
// Memories, one CALL per item so each sees the ones before it (ADD then UPDATE of one id works):
// ADD creates the id unless it exists (in any scope), valid_at (event time) defaulting to $at;
// UPDATE (valid_at when given) and DELETE (deleted_at = $at, invalid_at = the event time it ended)
// touch only live memories of the scope. UPDATE replaces text, hash and embedding and, when metadata is given, the metadata
// JSON and every meta.<key> property; when times is given (not null), the resolved times too. A
// memory stored from a message gets said_at and its turn key (types.turn_key). ADD and UPDATE link MENTIONS to the scope's entities, named
// by id or by the canonical name of the entity written with that id.
// Messages: the scope's (:Conversation) is MERGEd on the scope (unique), and last_seq is raised in
// a SET that reads it: Cypher takes the node's write lock before that read, so concurrent adds of a
// scope queue there and never share a seq. Then the scope's messages older than the newest
// $keep_messages are deleted (all are kept when it is negative).
//
// Parameters: $scope (the partition: Scope.key), $ids (every id of the write: Scope.full_key),
//   $scope_ids ({user_id, agent_id, run_id}), $at, $add_id,
//   $invalidations (list of {id, invalid_at}),
//   $entities (list of {id, name, canonical, entity_type, label, embedding, is_new, seq}),
//   $relations (list of {id, type, source_id, source_canonical, destination_id,
//                        destination_canonical, valid_at, invalid_at, created_at, expired_at, seq,
//                        fact, fact_embedding (both null or both set), provenance, retired_by};
//                        created_at, expired_at, provenance and retired_by null except in a restore),
//   $memories (list of {event, id, text, hash, embedding, metadata, meta, role, expires_at, seq, valid_at, invalid_at,
//                       created_at (null except in a restore),
//                       mentions: list of {id, canonical}, said_at, turn, times, time_from, time_to}),
//   $messages (list of {offset, role, content, timestamp, expires_at}), $keep_messages,
//   $idempotency_key (null, or a bulk import's key: an (:ImportKey) created with the add; one that
//   exists already fails the uniqueness rule and rolls the add back),
//   $idempotency_outcome (null, or for add(idempotency_key=...) the add's answer, stored on its
//   (:ImportKey) as `outcome` so a retry returns it: ingest/idempotency.py),
//   $unlock (true when the add runs in the transaction that holds its scope's lock, scope_lock.cypher:
//   the lock's node, created by that transaction, is deleted again so a commit never stores it)
// expires_at (retention, may be null): from then on the memory / message is invisible to reads.
// seq is the position in the add: with created_at it orders "oldest first" like insertion order.
// the scope's new version first (its (:ScopeVersion) node: stores/neo4j/scope_cache.py), in this
// statement's transaction, so a process's cached relation search sees the write at its next search;
// a write of memories and messages only leaves it (the cache holds entities and relations)
CALL () {
  WITH * WHERE size($entities) > 0 OR size($relations) > 0 OR size($invalidations) > 0
  MERGE (v:ScopeVersion {scope: $scope})
  SET v.version = randomUUID()
}
CALL () {
  WITH [x IN $invalidations | x.id] AS ids
  WHERE size(ids) > 0
  CALL (ids) {
    UNWIND $entities AS e
    MATCH (n:Entity {id: e.id})-[near]-(:Entity)
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
  SET r.invalid_at = x.invalid_at, r.expired_at = $at, r.updated_at = $at, r.retired_by = $add_id
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
      OPTIONAL MATCH (p:ScopePartition {scope: $scope})
      FOREACH (label IN CASE WHEN p IS NULL THEN [] ELSE [p.label] END | SET e:$(label))
      WITH e, x
      WHERE x.label IS NOT NULL
      SET e:$(x.label)
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
    // a pattern comprehension between the two bound endpoints: always an expand from s (an OPTIONAL
    // MATCH here was planned as a scan of every relationship of the database, then a filter)
    WITH x, s, d, head([(s)-[r]->(d)
                        WHERE x.expired_at IS NULL AND type(r) = x.type AND r.scope = $scope AND coalesce(r.ids, r.scope) = $ids
                          AND r.invalid_at IS NULL AND r.expired_at IS NULL | r]) AS current
    CALL (x, current) {
      WITH * WHERE current IS NOT NULL
      SET current.mentions = current.mentions + 1, current.updated_at = $at,
          current.provenance = CASE WHEN $add_id IN current.provenance THEN current.provenance
                                    ELSE current.provenance + $add_id END
      WITH * WHERE current.fact_embedding IS NULL AND x.fact_embedding IS NOT NULL
      SET current.fact = x.fact
      WITH current, x
      CALL db.create.setRelationshipVectorProperty(current, 'fact_embedding', x.fact_embedding)
    }
    CALL (x, s, d, current) {
      WITH * WHERE current IS NULL
      CREATE (s)-[r:$(x.type)]->(d)
      SET r += $scope_ids, r.id = x.id, r.scope = $scope, r.ids = $ids, r.valid_at = x.valid_at, r.invalid_at = x.invalid_at,
          r.created_at = coalesce(x.created_at, $at), r.updated_at = coalesce(x.created_at, $at),
          r.expired_at = x.expired_at, r.mentions = 1, r.provenance = coalesce(x.provenance, [$add_id]),
          r.retired_by = x.retired_by, r.seq = x.seq
      WITH * WHERE x.fact_embedding IS NOT NULL
      SET r.fact = x.fact
      WITH r, x
      CALL db.create.setRelationshipVectorProperty(r, 'fact_embedding', x.fact_embedding)
    }
  }
  RETURN sum(CASE WHEN s IS NULL OR d IS NULL THEN 1 ELSE 0 END) AS missing
}
CALL () {
  UNWIND $memories AS x
  CALL (x) {
    OPTIONAL MATCH (known:Memory {id: x.id})
    CALL (x, known) {
      WITH * WHERE x.event = 'ADD' AND known IS NULL
      CREATE (m:Memory {id: x.id})
      SET m += $scope_ids, m += x.meta, m.scope = $scope, m.text = x.text, m.hash = x.hash,
          m.metadata = x.metadata, m.role = x.role, m.created_at = coalesce(x.created_at, $at),
          m.updated_at = coalesce(x.created_at, $at), m.seq = x.seq,
          m.expires_at = x.expires_at, m.valid_at = coalesce(x.valid_at, $at),
          m.said_at = x.said_at, m.turn = x.turn, m.times = x.times, m.time_from = x.time_from, m.time_to = x.time_to
      WITH m, x
      CALL db.create.setNodeVectorProperty(m, 'embedding', x.embedding)
      OPTIONAL MATCH (p:ScopePartition {scope: $scope})
      FOREACH (label IN CASE WHEN p IS NULL THEN [] ELSE [p.memory_label] END | SET m:$(label))
      RETURN m
      UNION ALL
      WITH * WHERE x.event = 'UPDATE' AND known.scope = $scope AND known.deleted_at IS NULL
      SET known.text = x.text, known.hash = x.hash, known.updated_at = $at,
          known.valid_at = coalesce(x.valid_at, known.valid_at)
      FOREACH (_ IN CASE WHEN x.times IS NULL THEN [] ELSE [1] END |
        SET known.times = x.times, known.time_from = x.time_from, known.time_to = x.time_to)
      WITH known AS m, x
      CALL db.create.setNodeVectorProperty(m, 'embedding', x.embedding)
      CALL (m, x) {
        WITH * WHERE x.metadata IS NOT NULL
        UNWIND [key IN keys(m) WHERE key STARTS WITH 'meta.'] AS key
        REMOVE m[key]
      }
      CALL (m, x) {
        WITH * WHERE x.metadata IS NOT NULL
        SET m.metadata = x.metadata, m += x.meta
      }
      RETURN m
      UNION ALL
      WITH * WHERE x.event = 'DELETE' AND known.scope = $scope AND known.deleted_at IS NULL
      SET known.deleted_at = $at, known.invalid_at = coalesce(x.invalid_at, $at)
      RETURN null AS m
    }
    WITH m, x
    WHERE m IS NOT NULL
    UNWIND x.mentions AS ref
    OPTIONAL MATCH (by_id:Entity {id: ref.id}) WHERE by_id.scope = $scope
    OPTIONAL MATCH (by_name:Entity {scope: $scope, canonical: ref.canonical})
    WITH m, coalesce(by_id, by_name) AS e
    WHERE e IS NOT NULL
    MERGE (m)-[:MENTIONS]->(e)
  }
  RETURN count(x) AS memories
}
CALL () {
  WITH size($messages) AS appended
  WHERE appended > 0
  MERGE (c:Conversation {scope: $scope})
  ON CREATE SET c += $scope_ids
  SET c.last_seq = coalesce(c.last_seq, 0) + appended
  WITH c, c.last_seq - appended AS before
  CALL (c, before) {
    UNWIND $messages AS x
    CREATE (c)-[:HAS_MESSAGE]->(:Message {scope: $scope, seq: before + x.offset, add_id: $add_id, role: x.role,
                                          content: x.content, timestamp: x.timestamp, expires_at: x.expires_at})
  }
  CALL (c) {
    MATCH (old:Message)
    WHERE old.scope = $scope AND $keep_messages >= 0 AND old.seq <= c.last_seq - $keep_messages
    DETACH DELETE old
  }
  RETURN count(c) AS logged
}
CALL () {
  WITH $idempotency_key AS key
  WHERE key IS NOT NULL
  CREATE (:ImportKey {key: key, scope: $scope, add_id: $add_id, at: $at, outcome: $idempotency_outcome})
}
CALL () {
  MATCH (n:Entity) WHERE n.scope = $scope
  RETURN count(n) AS scope_size
}
CALL () {
  WITH $unlock AS unlock
  WHERE unlock
  MATCH (l:ScopeLock {scope: $scope})
  DELETE l
}
OPTIONAL MATCH (partition:ScopePartition {scope: $scope})
RETURN invalidated, entities, missing, memories, logged, scope_size, partition IS NOT NULL AS partitioned
