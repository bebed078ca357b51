// A statement that reads nothing: the plan warming runs one per connection it leaves open in the
// driver's pool (stores/neo4j/store.py _open_connections), so a search's two reads find them.
// Parameters: none
RETURN 1 AS ok
