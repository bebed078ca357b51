// The type and dimension of the index named entity_embedding (no row when it does not exist).
// Parameters: none
SHOW INDEXES
YIELD name, type, options
WHERE name = 'entity_embedding'
RETURN type, options.indexConfig.`vector.dimensions` AS dimensions
