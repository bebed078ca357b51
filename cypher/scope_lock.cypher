// Take the scope's write lock: run first in an explicit transaction that stays open while an add of
// the scope reads, decides and writes (in that same transaction: its reads and its write_graph with
// $unlock, which deletes this node again before the commit), or is rolled back when the add writes
// nothing. SET takes the node's exclusive lock (MERGE alone may only read an existing node), so a
// second process's add of the same scope waits here until the first one's transaction ends. Created
// and deleted by one transaction, or rolled back, the node is never stored: no scope id is left
// behind by the lock.
// Parameters: $scope
MERGE (l:ScopeLock {scope: $scope})
SET l.held = true
