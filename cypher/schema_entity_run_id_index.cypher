// Range index on Entity.run_id, for per-run queries and administration.
// Parameters: none
CREATE INDEX entity_run_id IF NOT EXISTS
FOR (n:Entity) ON (n.run_id)
