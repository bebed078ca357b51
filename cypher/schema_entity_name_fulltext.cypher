// Fulltext index over entity names. The scope key is indexed too, so a search can pre-filter by
// scope inside Lucene (an approximate, token-level filter; queries still compare n.scope exactly).
// Parameters: none
CREATE FULLTEXT INDEX entity_name IF NOT EXISTS
FOR (n:Entity) ON EACH [n.name, n.scope]
