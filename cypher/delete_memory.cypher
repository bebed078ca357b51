// Remove one memory for good (soft-deleted ones too), with its MENTIONS links (the entities stay):
// a conditional write. Returns 1, or 0 with nothing written when no memory has the id (a
// concurrent delete removed it first). Memory.delete runs it holding the memory's scope lock
// (scope_lock.cypher) after reading the memory again there, so of concurrent deletes of one id
// exactly one removes it (ingest/edits.py).
// Parameters: $id
MATCH (m:Memory {id: $id})
DETACH DELETE m
RETURN count(*) AS deleted
