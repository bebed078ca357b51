// Fulltext index over memory texts. The scope key is indexed too, so a search can pre-filter by
// scope inside Lucene (an approximate, token-level filter; queries still compare m.scope exactly).
// Parameters: none
CREATE FULLTEXT INDEX memory_text IF NOT EXISTS
FOR (m:Memory) ON EACH [m.text, m.scope]
