// Remove every node graphmem stores (entities and memories, with their relations) in batches;
// the schema stays. Runs as an auto-commit transaction (CALL ... IN TRANSACTIONS needs one).
// Parameters: none
MATCH (n:Entity|Memory)
CALL (n) {
  DETACH DELETE n
} IN TRANSACTIONS OF 5000 ROWS
