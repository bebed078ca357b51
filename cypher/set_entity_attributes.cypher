// Set ontology attribute values on an add's entities, in the add's transaction (after write_graph).
// Property names are attr_<name> where name is an attribute the ontology declares (validated when
// the config loads); the model's own keys never become property names. A later value replaces an
// earlier one.
// Parameters: $scope, $entities (list of {canonical, attrs: map of attr_<name> -> value})
UNWIND $entities AS x
MATCH (e:Entity {scope: $scope, canonical: x.canonical})
SET e += x.attrs
RETURN count(e) AS updated
