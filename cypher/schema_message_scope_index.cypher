// Range index on the scope key of logged messages. The write keeps only the newest messages of a
// scope, so the scope's few hundred messages are read from here and ordered by seq.
// Parameters: none
CREATE INDEX message_scope IF NOT EXISTS
FOR (m:Message) ON (m.scope)
