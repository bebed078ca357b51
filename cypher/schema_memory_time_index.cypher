// Range index on (scope, time_from) of memories whose text names a time (resolved at ingestion:
// time_from / time_to span every resolved expression): a question's date range finds them by a seek
// (memory_context.cypher).
// Parameters: none
CREATE INDEX memory_scope_time IF NOT EXISTS
FOR (m:Memory) ON (m.scope, m.time_from)
