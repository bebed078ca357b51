// Wait until one index is online.
// Parameters: $index, $timeout_seconds
CALL db.awaitIndex($index, $timeout_seconds)
