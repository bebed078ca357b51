// purpose: where this server serves HTTP(S), so graphmem browse points at its Neo4j Browser instead of assuming port 7474
// parameters: none
SHOW SETTINGS YIELD name, value
WHERE name IN ['server.http.enabled', 'server.http.advertised_address', 'server.https.enabled', 'server.https.advertised_address']
RETURN name, value
