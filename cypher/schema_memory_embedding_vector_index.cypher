// Vector index over memory embeddings (cosine), the same dimension as entity_embedding. Global like
// it: see resolve.cypher for how scoped queries use it. IF NOT EXISTS keeps an existing
// index as it is, so setup() checks its dimension afterwards.
// Parameters: $dimensions
CREATE VECTOR INDEX memory_embedding IF NOT EXISTS
FOR (m:Memory) ON (m.embedding)
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}}
