// Range index on Entity.agent_id, for per-agent queries and administration.
// Parameters: none
CREATE INDEX entity_agent_id IF NOT EXISTS
FOR (n:Entity) ON (n.agent_id)
