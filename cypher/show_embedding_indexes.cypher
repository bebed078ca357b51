// The type and dimension of graphmem's vector indexes, entity_embedding and memory_embedding (no row
// for one that does not exist).
// Parameters: none
SHOW INDEXES
YIELD name, type, options
WHERE name IN ['entity_embedding', 'memory_embedding']
RETURN name, type, options.indexConfig.`vector.dimensions` AS dimensions
