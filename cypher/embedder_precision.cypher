// The precision of the embedder that built this database (stores/precision.py; no record: fp32)
// and whether it holds vectors yet (any entity or memory).
// Parameters: none
OPTIONAL MATCH (r:EmbedderRecord {key: 'embedder'})
WITH r LIMIT 1
RETURN r.precision AS precision, EXISTS { MATCH (:Memory) } OR EXISTS { MATCH (:Entity) } AS holds_vectors
