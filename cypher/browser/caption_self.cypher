// purpose: caption a scope's own node with the user's name when a current naming relation gives one: label :Self and property display_name, which style.grass shows
// parameters: $scope (the scope key), $self_canonical (canonical name of the scope's own node), $name_types (relationship types that name it, e.g. HAS_NAME)
MATCH (me:Entity)
WHERE me.scope = $scope AND me.canonical = $self_canonical
OPTIONAL MATCH (me)-[r]->(n:Entity)
WHERE type(r) IN $name_types AND r.scope = $scope AND r.invalid_at IS NULL AND r.expired_at IS NULL
WITH me, n ORDER BY r.created_at DESC
WITH me, collect(n.name)[0] AS known
SET me:Self, me.display_name = CASE WHEN known IS NULL THEN me.name ELSE known + ' (me)' END
RETURN me.display_name AS caption
