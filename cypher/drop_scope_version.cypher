// Remove the scope's version node (bump_scope_version.cypher): run in the transaction of a write that
// erases the scope (delete_all, forget_scope), which must leave no node naming it. A scope without
// a version is never served from a process's cache (cached_search.py), so this is a change too.
// Parameters: $scope
OPTIONAL MATCH (v:ScopeVersion {scope: $scope})
DELETE v
RETURN count(v) AS dropped
