// Run by setup() before the schema statements when the schema is not current: an earlier version's
// set_summary could leave several (:Summary) nodes for one scope under concurrency (reads took the
// one covering the most messages). Keep that one per scope (the latest written among equals) and
// delete the others, so the uniqueness constraint summary_scope_unique can be created. A no-op on a
// database with one summary per scope.
// Parameters: none
MATCH (s:Summary)
WITH s.scope AS scope, s
ORDER BY s.through DESC, s.updated_at DESC
WITH scope, collect(s) AS summaries
WHERE size(summaries) > 1
UNWIND summaries[1..] AS extra
DELETE extra
RETURN count(extra) AS deleted
