"""Time travel: what was true then, and what graphmem believed then.

    python examples/time_travel.py

A contradicted relation is not deleted: it gets an end (invalid_at, event time) and stays in the
timeline; search(as_of=...) asks what was true at a moment.
"""

from _models import models

from graphmem import Memory

SCRIPT = [
    {"text": "I live in Boston", "facts": ["Lives in Boston"], "entities": [("I", "person"), ("Boston", "city")],
     "relations": [("I", "lives_in", "Boston")]},
    {"text": "I moved to Denver", "facts": ["Moved to Denver"], "entities": [("I", "person"), ("Denver", "city")],
     "relations": [("I", "lives_in", "Denver")], "retire": [("alice", "lives_in", "Boston")]},
]

with models(SCRIPT) as config, Memory(config) as memory:
    memory.add("I live in Boston", user_id="alice", timestamp="2019-03-01")
    memory.add("I moved to Denver", user_id="alice", timestamp="2023-06-15")

    for when in ("2021-01-01", None):
        rels = memory.search("where do I live?", user_id="alice", as_of=when)["relations"]
        lives = [r["destination"] for r in rels if r["relationship"] == "LIVES_IN"]
        print(f"lives in (as of {when or 'now'}):", ", ".join(lives))
    for r in memory.timeline("me", user_id="alice")["relations"]:
        print(f"timeline: {r['relationship']} {r['destination']} from {r['valid_at'][:10]} until {(r['invalid_at'] or 'now')[:10]}")
