// The plain range index on :Summary(scope) of earlier versions, replaced by the uniqueness
// constraint summary_scope_unique (whose own index serves the same lookups): Neo4j refuses a
// constraint on a label and property an index already covers. graphmem created it under this name.
// Parameters: none
DROP INDEX summary_scope IF EXISTS
