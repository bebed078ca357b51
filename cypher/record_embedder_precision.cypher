// Record the precision of the embedder that writes this database (stores/precision.py): one node,
// set when the database holds no vectors yet.
// Parameters: $precision
MERGE (r:EmbedderRecord {key: 'embedder'})
SET r.precision = $precision
