// Range index on the retention time of memory facts, so purge_expired finds expired ones directly.
// Parameters: none
CREATE INDEX memory_expires_at IF NOT EXISTS
FOR (m:Memory) ON (m.expires_at)
