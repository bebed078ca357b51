// Entity ids are unique; the constraint's index backs every lookup by id.
// Parameters: none
CREATE CONSTRAINT entity_id_unique IF NOT EXISTS
FOR (n:Entity) REQUIRE n.id IS UNIQUE
