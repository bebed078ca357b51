// One version node per scope (bump_scope_version.cypher), so two transactions bumping it at once
// queue on the same node instead of each creating their own.
// Parameters: none
CREATE CONSTRAINT scope_version_scope_unique IF NOT EXISTS
FOR (v:ScopeVersion) REQUIRE v.scope IS UNIQUE
