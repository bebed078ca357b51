// graphmem's own indexes (those named in $names) with what setup() checks: kind, state, owning
// constraint (the backing index of a uniqueness constraint) and, for vector indexes, the dimension
// (stores/neo4j/schema_check.py decides from these rows whether the schema statements can be skipped).
// The scope partitions' indexes are left out: there are two per large scope, and every setup reads this.
// Parameters: $names (index names)
SHOW INDEXES
YIELD name, type, state, owningConstraint, options
WHERE name IN $names
RETURN name, type, state, owningConstraint, options.indexConfig.`vector.dimensions` AS dimensions
