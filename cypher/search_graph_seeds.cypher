// The cached relation search's one read before ranking (stores/neo4j/relcache.py): the scope's
// version (bump_scope_version.cypher; null before its first write) and the $top_k best fulltext hits of
// $fulltext_terms on entity names, exactly as search_graph.cypher's seeds (b): pre-filtered by
// the scope's tokens inside Lucene (boost 0), best first, ties by id; none when $fulltext_terms is null.
// Parameters: $scope, $fulltext_terms, $fulltext_scope, $fulltext_limit, $top_k
OPTIONAL MATCH (v:ScopeVersion {scope: $scope})
WITH v.version AS version
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
RETURN version, hits
