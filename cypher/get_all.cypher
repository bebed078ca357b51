// Relations of the scope, oldest first: those valid now unless $include_invalidated (every version).
// "Valid now" is stores.base.relation_visible with as_of = known_at = None: pure event time at $now
// (passed by the caller, never the server clock): valid_at <= $now < invalid_at, open ends allowed.
// The placeholder "true /* relation filter */" is replaced by the compiled filter over r, s and d
// (graphmem.stores.neo4j.filters).
// Parameters: $scope, $include_invalidated, $now, $limit, the filter's (fm_0 or fr_0, ...)
MATCH (s:Entity)-[r]->(d:Entity)
WHERE s.scope = $scope AND r.scope = $scope AND true /* relation filter */
  AND ($include_invalidated OR ((r.valid_at IS NULL OR r.valid_at <= $now)
                                AND (r.invalid_at IS NULL OR $now < r.invalid_at)))
// times as ISO text (toString): the driver hydrates DateTime values in pure Python (~0.1 ms each:
// 2.8 of the 3.4 s reading a 5,000-entity user's 7,500 relation versions for the inspector)
RETURN r {.id, .mentions, .provenance, .fact, .retired_by, valid_at: toString(r.valid_at), invalid_at: toString(r.invalid_at),
          created_at: toString(r.created_at), updated_at: toString(r.updated_at), expired_at: toString(r.expired_at)} AS rel,
       type(r) AS relationship, s.id AS source_id, s.name AS source, d.id AS destination_id, d.name AS destination,
       s.entity_type AS source_type, d.entity_type AS destination_type,
       [k IN keys(s) WHERE k STARTS WITH 'attr_' | [k, s[k]]] AS source_attrs,
       [k IN keys(d) WHERE k STARTS WITH 'attr_' | [k, d[k]]] AS destination_attrs
ORDER BY r.created_at, r.seq, r.id
LIMIT $limit
