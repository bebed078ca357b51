// Block until every index is online (newly created indexes populate in the background).
// Parameters: $timeout_seconds
CALL db.awaitIndexes($timeout_seconds)
