// One lock node per scope (scope_lock.cypher), so two processes MERGing it at once queue on the
// same node instead of each creating their own.
// Parameters: none
CREATE CONSTRAINT scope_lock_scope_unique IF NOT EXISTS
FOR (l:ScopeLock) REQUIRE l.scope IS UNIQUE
