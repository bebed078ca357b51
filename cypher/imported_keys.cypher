// Which of $keys were already imported (their adds committed). Index-backed (import_key_unique).
// Parameters: $keys
UNWIND $keys AS key
MATCH (k:ImportKey {key: key})
RETURN k.key AS key
