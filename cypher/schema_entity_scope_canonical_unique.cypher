// One entity per (scope, canonical name). The write MERGEs new entities on this pair, so two
// concurrent adds of the same name in one scope cannot create twins.
// Parameters: none
CREATE CONSTRAINT entity_scope_canonical_unique IF NOT EXISTS
FOR (n:Entity) REQUIRE (n.scope, n.canonical) IS UNIQUE
