// purpose: give a scope's entities a display label for their type (e.g. :Person) so style.grass can colour them; graphmem's own queries only use :Entity and ignore these labels
// parameters: $scope (the scope key), $labels (map: lower-case entity_type -> label, only labels style.grass knows)
MATCH (e:Entity)
WHERE e.scope = $scope AND e.entity_type IS NOT NULL
WITH e, $labels[toLower(e.entity_type)] AS label
WHERE label IS NOT NULL
SET e:$(label)
RETURN count(e) AS labelled
