// Range index on the memory's scope key: every memory query starts from "the memories of this scope".
// Parameters: none
CREATE INDEX memory_scope IF NOT EXISTS
FOR (m:Memory) ON (m.scope)
