// purpose: whether this Neo4j holds data of a graphmem Neo4j store (anything but graphmem browse's display copies, whose scope starts with $prefix); browse copies a graph only into a database without any
// parameters: $prefix (the scope prefix of display copies)
// Each EXISTS stops at its first node (a label lookup), so the check costs the same on any database size.
RETURN EXISTS { MATCH (:Memory) } OR EXISTS { MATCH (:Conversation) } OR EXISTS { MATCH (:EmbedderRecord) }
    OR EXISTS { MATCH (:ImportKey) } OR EXISTS { MATCH (:ScopeVersion) } OR EXISTS { MATCH (:Summary) }
    OR EXISTS { MATCH (:ScopeLock) } OR EXISTS { MATCH (:ScopePartition) }
    OR EXISTS { MATCH (e:Entity) WHERE e.scope IS NULL OR NOT e.scope STARTS WITH $prefix } AS holds_store_data
