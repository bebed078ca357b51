// Range index on (scope, turn) of memories stored from messages: the neighbouring messages of a hit
// are the next smaller and larger turn keys of its scope (memory_context.cypher), found by a seek.
// Parameters: none
CREATE INDEX memory_scope_turn IF NOT EXISTS
FOR (m:Memory) ON (m.scope, m.turn)
