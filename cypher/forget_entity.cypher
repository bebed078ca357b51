// Erasure of one entity, in the scopes written with the given ids ($user_id, $agent_id, $run_id;
// null matches any value): the entity named $canonical with its relations (and their facts), the
// relation versions whose fact matches $pattern, the memory facts that
// MENTION it or whose text matches $pattern (soft-deleted ones too), the logged messages matching
// $pattern, and the rolling summaries matching it (dropped, with summary_through reset so the next
// summary is written again from the remaining messages).
// $pattern is a whole-word, case-insensitive regex of the entity's name built by
// graphmem.stores.lifecycle.name_pattern (every character that is not a letter or digit escaped).
// Parameters: $scope (the partition: Scope.key), $user_id, $agent_id, $run_id, $canonical, $pattern
// the scope's new version first (its (:ScopeVersion) node: stores/neo4j/scope_cache.py), in this
// statement's transaction, so a process's cached relation search sees the write at its next search
CALL () {
  MERGE (v:ScopeVersion {scope: $scope})
  SET v.version = randomUUID()
}
CALL () {
  MATCH (e:Entity)
  WHERE e.canonical = $canonical AND e.scope = $scope
    AND ($user_id IS NULL OR e.user_id = $user_id) AND ($agent_id IS NULL OR e.agent_id = $agent_id)
    AND ($run_id IS NULL OR e.run_id = $run_id)
  RETURN collect(e) AS named
}
CALL (named) {
  UNWIND named AS e
  MATCH (m:Memory)-[:MENTIONS]->(e)
  RETURN collect(m) AS linked
}
CALL () {
  MATCH (m:Memory)
  WHERE m.scope = $scope AND ($user_id IS NULL OR m.user_id = $user_id) AND ($agent_id IS NULL OR m.agent_id = $agent_id)
    AND ($run_id IS NULL OR m.run_id = $run_id) AND m.text =~ $pattern
  RETURN collect(m) AS mentioning
}
CALL (linked, mentioning) {
  UNWIND linked + mentioning AS m
  WITH DISTINCT m
  WITH collect(m) AS gone
  WITH gone, [m IN gone | m.id] AS memory_ids
  FOREACH (m IN gone | DETACH DELETE m)
  RETURN memory_ids
}
CALL () {
  MATCH (c:Conversation)
  WHERE c.scope = $scope AND ($user_id IS NULL OR c.user_id = $user_id) AND ($agent_id IS NULL OR c.agent_id = $agent_id)
    AND ($run_id IS NULL OR c.run_id = $run_id)
  RETURN collect(c) AS conversations
}
CALL (conversations) {
  UNWIND conversations AS c
  MATCH (c)-[:HAS_MESSAGE]->(m:Message)
  WHERE m.content =~ $pattern
  DETACH DELETE m
  RETURN count(*) AS messages
}
CALL (conversations) {
  UNWIND conversations AS c
  WITH c WHERE c.summary =~ $pattern
  SET c.summary = null, c.summary_through = 0, c.summary_updated_at = null
  RETURN count(*) AS legacy_summaries
}
CALL (conversations) {
  OPTIONAL MATCH (s:Summary)
  WHERE s.scope IN [c IN conversations | c.scope] AND s.text =~ $pattern
  DELETE s
  RETURN count(s) AS stored_summaries
}
CALL () {
  // relation versions whose fact names the entity without touching it (written with another name
  // than the one the entity was resolved to): erased like the memory facts whose text names it
  MATCH (s:Entity)-[r]->()
  WHERE s.scope = $scope AND r.scope = $scope AND r.fact =~ $pattern
    AND ($user_id IS NULL OR r.user_id = $user_id) AND ($agent_id IS NULL OR r.agent_id = $agent_id)
    AND ($run_id IS NULL OR r.run_id = $run_id)
  DELETE r
  RETURN count(r) AS facts
}
CALL (named) {
  FOREACH (e IN named | DETACH DELETE e)
  RETURN size(named) AS entities
}
RETURN memory_ids, entities, messages, legacy_summaries + stored_summaries AS summaries
