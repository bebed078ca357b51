// Remove every node graphmem stores (entities, memories, messages, conversations, summaries, with their
// relations, and scope partition markers, import keys) in batches; the schema and partition indexes stay. Runs as an auto-commit transaction (CALL ... IN
// TRANSACTIONS needs one).
// Parameters: none
MATCH (n:Entity|Memory|Message|Conversation|Summary|ScopePartition|ImportKey|ScopeVersion)
CALL (n) {
  DETACH DELETE n
} IN TRANSACTIONS OF 5000 ROWS
