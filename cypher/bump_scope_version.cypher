// A new version of each scope in $scopes: run in the transaction of every write that changes the
// scope's entities or relations (an add of either mode, set_relation_facts, forget, delete_all), so
// a process's cache of the scope's vectors (stores/neo4j/relcache.py) sees the change at its next
// search. A random token, not a counter: reset deletes the version nodes, and a counter restarting
// at 1 could match a cache of before the reset.
// Parameters: $scopes (scope keys)
UNWIND $scopes AS scope
MERGE (v:ScopeVersion {scope: scope})
SET v.version = randomUUID()
RETURN count(v) AS bumped
