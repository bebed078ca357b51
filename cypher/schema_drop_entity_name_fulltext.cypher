// The entity-name fulltext index of earlier versions, replaced by text_fulltext: left in place,
// every add's commit would keep refreshing it. graphmem created it under this name.
// Parameters: none
DROP INDEX entity_name IF EXISTS
