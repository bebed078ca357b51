// Remove one memory for good, with its MENTIONS links (the entities stay); returns 1, or 0 when
// no memory has the id.
// Parameters: $id
MATCH (m:Memory {id: $id})
DETACH DELETE m
RETURN count(*) AS deleted
