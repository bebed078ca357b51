// How many nodes the database holds (read from the server's counts store: constant time). The plan
// generations (stores/neo4j/plans.py) follow it.
// Parameters: none
MATCH (n)
RETURN count(n) AS nodes
