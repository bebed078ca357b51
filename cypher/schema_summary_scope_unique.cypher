// One rolling summary per scope. set_summary.cypher MERGEs the scope's (:Summary) on the scope, so
// concurrent summaries of one scope (several processes) find the same node instead of each creating
// their own. A database written by an earlier version may hold several for a scope: setup() keeps
// the newest of each scope first (summaries_keep_newest.cypher), then creates this.
// Parameters: none
CREATE CONSTRAINT summary_scope_unique IF NOT EXISTS
FOR (s:Summary) REQUIRE s.scope IS UNIQUE
