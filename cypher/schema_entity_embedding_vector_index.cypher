// Vector index over entity embeddings (cosine). Global: Neo4j 5.26 cannot pre-filter a vector
// search by scope, see resolve.cypher for how scoped queries use it.
// IF NOT EXISTS keeps an existing index as it is, so setup() checks its dimension afterwards.
// Parameters: $dimensions
CREATE VECTOR INDEX entity_embedding IF NOT EXISTS
FOR (n:Entity) ON (n.embedding)
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}}
