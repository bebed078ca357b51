// Range index on Entity.user_id, for per-user queries and administration.
// Parameters: none
CREATE INDEX entity_user_id IF NOT EXISTS
FOR (n:Entity) ON (n.user_id)
