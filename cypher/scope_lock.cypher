// Take the scope's write lock: run inside an explicit transaction that stays open while an add of
// the scope reads, decides and writes (in other transactions), then is rolled back. SET takes the
// node's exclusive lock (MERGE alone may only read an existing node), so a second process's add of
// the same scope waits here until the first one's transaction ends. Rolled back, the node is never
// stored: no scope id is left behind by the lock.
// Parameters: $scope
MERGE (l:ScopeLock {scope: $scope})
SET l.held = true
