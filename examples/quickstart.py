"""Quickstart: remember what a user says, then ask.

    python examples/quickstart.py        # offline with the fake model, or OpenAI with OPENAI_API_KEY

add() extracts memory facts and a knowledge graph (entities, relations) from the message; search()
returns both, ranked, with no LLM call.
"""

from _models import models

from graphmem import Memory

SCRIPT = [{"text": "I moved to Denver", "facts": ["Lives in Denver", "Has a sister named Ana who lives in Porto"],
           "entities": [("I", "person"), ("Denver", "city"), ("Ana", "person"), ("Porto", "city")],
           "relations": [("I", "lives_in", "Denver"), ("I", "has_sister", "Ana"), ("Ana", "lives_in", "Porto")]}]

with models(SCRIPT) as config, Memory(config) as memory:
    memory.add("I moved to Denver last spring. My sister Ana lives in Porto.", user_id="alice")

    found = memory.search("where does my family live?", user_id="alice", limit=5)
    for m in found["results"]:
        print("memory:", m["memory"])
    for r in found["relations"]:
        print("relation:", r["source"], r["relationship"], r["destination"])
