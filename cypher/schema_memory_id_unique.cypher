// Memory ids are unique; the constraint's index backs get_memory, delete_memory and the write's lookups.
// Parameters: none
CREATE CONSTRAINT memory_id_unique IF NOT EXISTS
FOR (m:Memory) REQUIRE m.id IS UNIQUE
