// One fulltext index over entity names and memory texts: a commit that creates or changes both
// refreshes one Lucene index instead of two (each refresh costs the add's commit ~3 ms). A query
// names its field (name:(...) for entities, text:(...) for memories; an entity has no text and a
// memory no name property: attributes and metadata keys are prefixed) and its statement checks the
// label. The scope key is indexed too, so a search can pre-filter by scope inside Lucene (an
// approximate, token-level filter; queries still compare the scope property exactly).
// Replaces entity_name and memory_text (earlier versions), dropped by
// schema_drop_entity_name_fulltext / schema_drop_memory_text_fulltext.
// Parameters: none
CREATE FULLTEXT INDEX text_fulltext IF NOT EXISTS
FOR (n:Entity|Memory) ON EACH [n.name, n.text, n.scope]
