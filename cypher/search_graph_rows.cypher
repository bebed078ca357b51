// The relations the cached relation search chose and its scope's cache has not read yet
// (stores/neo4j/cached_search.py), with search_graph.cypher's columns but the scores: each found by
// the element id the cache holds, and kept only if it is still the same relation of the scope (an
// element id reused after a delete is not); $rows' i comes back to say which.
// Parameters: $scope, $rows ([{i, eid, id}])
// the relationship by its element id alone (a seek; with labelled endpoints the planner expanded the
// scope's relations instead)
UNWIND $rows AS x
MATCH ()-[r]->()
WHERE elementId(r) = x.eid
WITH x, r, startNode(r) AS s, endNode(r) AS d
WHERE r.id = x.id AND r.scope = $scope AND s:Entity AND d:Entity AND s.scope = $scope
RETURN r {.id, .mentions, .provenance, .fact, .retired_by, valid_at: toString(r.valid_at), invalid_at: toString(r.invalid_at),
          created_at: toString(r.created_at), updated_at: toString(r.updated_at), expired_at: toString(r.expired_at)} AS rel,
       type(r) AS relationship, s.id AS source_id, s.name AS source, d.id AS destination_id, d.name AS destination,
       s.entity_type AS source_type, d.entity_type AS destination_type,
       [k IN keys(s) WHERE k STARTS WITH 'attr_' | [k, s[k]]] AS source_attrs,
       [k IN keys(d) WHERE k STARTS WITH 'attr_' | [k, d[k]]] AS destination_attrs,
       x.i AS i
