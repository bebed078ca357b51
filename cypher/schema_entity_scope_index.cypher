// Range index on the scope key: every query starts from "the entities of this scope".
// Parameters: none
CREATE INDEX entity_scope IF NOT EXISTS
FOR (n:Entity) ON (n.scope)
