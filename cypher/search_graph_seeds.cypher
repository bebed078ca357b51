// The cached relation search's read before ranking (stores/neo4j/cached_search.py): the scope's
// version (the (:ScopeVersion) node every write of its entities or relations sets anew in its own
// statement; null before its first write), its number of entities, the $top_k best fulltext hits of
// $fulltext_terms on entity names exactly as search_graph.cypher's seeds (b) (pre-filtered by the
// scope's tokens inside Lucene, boost 0; best first, ties by id; none when $fulltext_terms is null),
// and, only when the version is not $known_version (the one the process's cache holds) but is
// $seen_version (met by an earlier search of the process: a version is loaded the second time it is
// met) and the scope is small enough for the exact scan ($scan_limit entities), the scope's entity-name and
// relation-fact vectors with what the ranking needs (scope_cache.py): the version is read first, so
// a write committed while the rest is read makes the next search load again. Times as [epoch
// seconds, nanosecond] (compared to the microsecond in the client). Relations: every relation of the scope from one of its entities to an
// entity, whatever its type (search_graph.cypher's scan).
// Parameters: $scope, $known_version, $seen_version, $scan_limit, $fulltext_terms, $fulltext_scope, $fulltext_limit, $top_k
OPTIONAL MATCH (v:ScopeVersion {scope: $scope})
WITH v.version AS version
CALL () {
  MATCH (n:Entity)
  WHERE n.scope = $scope
  RETURN count(n) AS scope_size
}
CALL () {
  WITH * WHERE $fulltext_terms IS NOT NULL
  CALL db.index.fulltext.queryNodes(
    'text_fulltext', 'name:(' + $fulltext_terms + ') AND scope:"' + $fulltext_scope + '"^0',
    {limit: $fulltext_limit})
  YIELD node, score
  WITH node, score
  WHERE node:Entity AND node.scope = $scope
  WITH node, score
  ORDER BY score DESC, node.id
  LIMIT $top_k
  RETURN collect([node.id, score]) AS hits
}
// the guards sit inside the seek values: an unchanged or large scope reads nothing more
CALL (version, scope_size) {
  MATCH (n:Entity)
  WHERE n.scope = CASE WHEN version = $seen_version AND version <> coalesce($known_version, '') AND scope_size <= $scan_limit THEN $scope END
  RETURN collect([n.id, n.embedding, n.canonical]) AS entities
}
CALL (version, scope_size) {
  MATCH (s:Entity)-[r]->(d:Entity)
  WHERE s.scope = CASE WHEN version = $seen_version AND version <> coalesce($known_version, '') AND scope_size <= $scan_limit THEN $scope END
    AND r.scope = $scope
  RETURN collect([elementId(r), r.id, s.id, d.id, r.fact_embedding, toLower(r.fact), r.seq,
                  [r.created_at.epochSeconds, r.created_at.nanosecond], [r.expired_at.epochSeconds, r.expired_at.nanosecond],
                  [r.valid_at.epochSeconds, r.valid_at.nanosecond], [r.invalid_at.epochSeconds, r.invalid_at.nanosecond]]) AS relations
}
RETURN version, scope_size, hits,
       CASE WHEN version = $seen_version AND version <> coalesce($known_version, '') AND scope_size <= $scan_limit THEN entities END AS entities,
       relations
