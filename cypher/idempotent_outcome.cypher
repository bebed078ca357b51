// The answer stored with the committed add of an idempotency key (add(idempotency_key=...): the
// key is a digest of the caller's scope and key, ingest/idempotency.py); no row when no add of that
// key committed. Index-backed (import_key_unique).
// Parameters: $key
MATCH (k:ImportKey {key: $key})
RETURN k.outcome AS outcome
