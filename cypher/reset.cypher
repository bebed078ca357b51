// Remove every node graphmem stores (entities, memories, messages, conversations, with their
// relations) in batches; the schema stays. Runs as an auto-commit transaction (CALL ... IN
// TRANSACTIONS needs one).
// Parameters: none
MATCH (n:Entity|Memory|Message|Conversation)
CALL (n) {
  DETACH DELETE n
} IN TRANSACTIONS OF 5000 ROWS
