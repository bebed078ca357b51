// A vector index of its own for one large scope ("scope partition"), over a label only that
// scope's entities carry. Neo4j 5.26 cannot pre-filter a vector search, so a large scope searched
// through the global index needs k oversampled by total / scope size (k = 1000 for a 10k-entity
// scope among 1M); its own index answers with k = top_k.
// Index names and labels cannot be parameters in Cypher: __INDEX__ and __LABEL__ are replaced by
// names the store derives from a SHA-256 of the scope key (letters, digits and underscores only,
// checked before use), never by text that came from a user or a model.
// Parameters: $dimensions
CREATE VECTOR INDEX __INDEX__ IF NOT EXISTS
FOR (n:__LABEL__) ON (n.embedding)
OPTIONS {indexConfig: {`vector.dimensions`: $dimensions, `vector.similarity_function`: 'cosine'}}
