// The indexes Mem0 creates when its base label is on (the most favourable Mem0 set-up): a range
// index on user_id and a composite one on (name, user_id). No vector index, no uniqueness.
// Parameters: none
CREATE INDEX mem0_entity_user_id IF NOT EXISTS FOR (n:Mem0Entity) ON (n.user_id);
CREATE INDEX mem0_entity_name_user_id IF NOT EXISTS FOR (n:Mem0Entity) ON (n.name, n.user_id)
