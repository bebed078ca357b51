// Every version of every relation of the scope touching the entity named $canonical (current,
// invalidated and expired alike), ordered by event time (valid_at, else created_at), then by
// transaction time. No row when the entity does not exist.
// The placeholder "true /* relation filter */" narrows to the ids the scope names beyond its owner.
// Parameters: $scope, $canonical, the filter's (fr_0, ...)
MATCH (e:Entity {scope: $scope, canonical: $canonical})-[r]-(:Entity)
WHERE r.scope = $scope
WITH DISTINCT r
WITH r, startNode(r) AS s, endNode(r) AS d
WHERE true /* relation filter */
// times as ISO text (toString), as in get_all.cypher
RETURN r {.id, .mentions, .provenance, .fact, .retired_by, valid_at: toString(r.valid_at), invalid_at: toString(r.invalid_at),
          created_at: toString(r.created_at), updated_at: toString(r.updated_at), expired_at: toString(r.expired_at)} AS rel,
       type(r) AS relationship, s.id AS source_id, s.name AS source, d.id AS destination_id, d.name AS destination,
       s.entity_type AS source_type, d.entity_type AS destination_type,
       [k IN keys(s) WHERE k STARTS WITH 'attr_' | [k, s[k]]] AS source_attrs,
       [k IN keys(d) WHERE k STARTS WITH 'attr_' | [k, d[k]]] AS destination_attrs
ORDER BY coalesce(r.valid_at, r.created_at), r.created_at, r.seq, r.id
