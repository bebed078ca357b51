// Every index of the database with what setup() checks: its kind, state, owning constraint (the
// backing index of a uniqueness constraint) and, for vector indexes, the dimension
// (stores/neo4j/schema_check.py decides from these rows whether the schema statements can be skipped).
// Parameters: none
SHOW INDEXES
YIELD name, type, state, owningConstraint, options
RETURN name, type, state, owningConstraint, options.indexConfig.`vector.dimensions` AS dimensions
