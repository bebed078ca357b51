// Idempotency keys of bulk imports (Memory.add_many, graphmem import): one (:ImportKey) per imported
// add, written in the add's own transaction, so a re-run skips exactly the adds that committed.
// Parameters: none
CREATE CONSTRAINT import_key_unique IF NOT EXISTS
FOR (k:ImportKey) REQUIRE k.key IS UNIQUE
