// Range index on the scope key of rolling summaries (set_summary.cypher keeps one per scope).
// Parameters: none
CREATE INDEX summary_scope IF NOT EXISTS
FOR (s:Summary) ON (s.scope)
