// Range index on the retention time of logged messages, so purge_expired finds expired ones directly.
// Parameters: none
CREATE INDEX message_expires_at IF NOT EXISTS
FOR (m:Message) ON (m.expires_at)
