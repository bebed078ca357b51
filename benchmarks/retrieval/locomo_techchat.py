"""A long-technical-chat-shaped conversation in LOCOMO's format, built here (no data fetched).

The shape default search must also serve (DESIGN.md): a user and an assistant; long assistant answers
full of code; instructions and preferences the user states once, early, in passing, and asks about
much later in other words; a few questions about one specific answer (its rare identifiers). The
long code answers repeat the generic technical words the later questions use ("code", "python",
"service", "format", "database"), which is what makes a lexical signal over-confident there.

It is a synthetic check of a mechanism's direction, not a benchmark of graphmem's quality:

    python -m benchmarks.retrieval.locomo_techchat /tmp/techchat.json [--sessions 8 --seed 7]
    python -m benchmarks.retrieval.locomo /tmp/techchat.json --presets vector bm25 hybrid --k 10
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

USER, ASSISTANT = "Dana", "Assistant"

#: (stated once, in passing; asked much later in other words)
INSTRUCTIONS = [
    ("By the way, please always put type hints in the Python you send me, untyped snippets are hard for me to review.",
     "What did I ask you to include in every piece of code you write for me?"),
    ("I'm a tabs person, so indent my Go files with tabs and not spaces please.",
     "What is my preference for whitespace in Go source?"),
    ("Keep replies brief from now on, I mostly read them on my phone during the commute.",
     "How long should your answers be, and why?"),
    ("Our team runs everything on a managed Kubernetes cluster in Frankfurt.",
     "Where does my team deploy its services?"),
    ("Please never recommend pandas to me, the production image cannot install it.",
     "Which library should you avoid suggesting for data work?"),
    ("We call the main backend Orchard internally, use that name in examples.",
     "What name do I use for the main service?"),
    ("I like commit messages in the imperative mood and under sixty characters.",
     "How should the commit messages you write for me look?"),
    ("PostgreSQL 15 is what I use for everything, don't bother with MySQL answers.",
     "Which database system should your answers assume?"),
    ("I want log lines as JSON, exactly one object per line, so our collector can parse them.",
     "What format do I want for log output?"),
    ("I'm learning Rust this year, so when a Rust example makes sense, show me that one.",
     "Which programming language am I currently learning?"),
]

#: (user's question, topic identifier, later question about that answer)
TOPICS = [
    ("How do I retry failed HTTP calls with backoff?", "retry_with_backoff", "Which function did you write to retry HTTP calls with backoff?"),
    ("Can you show me how to parse a CSV header and validate the columns?", "parse_csv_header", "What was the helper you wrote for validating CSV header columns?"),
    ("How can I cache database query results in memory?", "QueryResultCache", "What class did you propose for caching query results?"),
    ("What's a clean way to load settings from environment variables?", "load_env_settings", "Which function reads the settings from environment variables?"),
    ("How do I rate limit requests per API key?", "TokenBucketLimiter", "What did you call the rate limiter for API keys?"),
    ("How do I stream a large file upload to object storage?", "stream_upload_chunks", "Which function streams upload chunks to object storage?"),
    ("How should I paginate a long query result with a cursor?", "CursorPaginator", "What was the cursor pagination class called?"),
    ("How can I run database migrations at service start?", "apply_pending_migrations", "Which function applies pending migrations at start?"),
    ("How do I write a health check endpoint?", "health_probe_handler", "What is the name of the health check handler you wrote?"),
    ("How do I hash passwords safely?", "hash_password_argon", "Which function did you write to hash passwords?"),
    ("How do I debounce events from a file watcher?", "debounce_watch_events", "What did you call the file watcher debounce helper?"),
    ("How do I serialise dataclasses to JSON with dates?", "DataclassJSONEncoder", "Which encoder did you write for dataclasses with dates?"),
]

GENERIC = ("code python service format database log example type function value error config request response "
           "test data file name string list return import module client server answer commit line json team").split()
PROSE = [
    "Here is a version you can drop into the {svc} code base; it keeps the {w1} handling explicit so the {w2} path is easy to test.",
    "The important part is how the {w1} is passed around: every {w2} goes through one function, and errors are returned, not hidden.",
    "If you need the same {w1} in another module, import it instead of copying it, and keep the {w2} in the config file.",
    "I wrote a small test as well, because the {w1} and {w2} edge cases are where this kind of code usually breaks.",
    "Note that the example logs each {w1} and {w2} so you can see in the log what the service did with every request.",
]


def code_block(rng: random.Random, ident: str, lines: int) -> str:
    """A plausible Python block around ``ident``, dense with the generic words."""
    out = ["```python", "import json", "import logging", "from dataclasses import dataclass", ""]
    out.append(f"def {ident}(config: dict, request: dict) -> dict:" if ident[0].islower() else f"class {ident}:")
    for _ in range(lines):
        a, b, c = rng.sample(GENERIC, 3)
        out.append(rng.choice([
            f"    {a}_{b} = config.get('{a}_{b}', None)  # the {c} value",
            f"    if not {a}: raise ValueError('missing {b} in {c}')",
            f"    log.info(json.dumps({{'{a}': {b}, '{c}': request}}))",
            f"    return {{'{a}': {b}_{c}, 'type': type({a}).__name__}}",
            f"    for {a} in {b}_list: {c}.append({a})",
        ]))
    out.append("```")
    return "\n".join(out)


def long_answer(rng: random.Random, ident: str) -> str:
    parts = []
    for _ in range(3):
        w1, w2 = rng.sample(GENERIC, 2)
        parts.append(rng.choice(PROSE).format(svc="main", w1=w1, w2=w2))
        parts.append(code_block(rng, ident, rng.randint(10, 18)))
    parts.append(f"Call {ident} from your request handler and check the returned value in a test.")
    return "\n\n".join(parts)


def build(sessions: int = 8, seed: int = 7, fillers: int = 3) -> dict[str, Any]:
    """One LOCOMO-format sample: instructions early (sessions 1-2), code answers throughout, every
    question asked at the end (it searches the whole conversation)."""
    rng = random.Random(seed)
    start = datetime(2024, 3, 4, 9, 30)
    conv: dict[str, Any] = {"speaker_a": USER, "speaker_b": ASSISTANT}
    evidence: dict[str, str] = {}
    topics = list(TOPICS)
    instructions = list(INSTRUCTIONS)
    for s in range(1, sessions + 1):
        when = start + timedelta(days=3 * s)
        conv[f"session_{s}_date_time"] = when.strftime("%I:%M %p on %d %B, %Y")
        turns: list[dict[str, str]] = []
        per_session = max(1, -(-len(topics) // max(1, sessions - s + 1))) if topics else 0
        for _ in range(per_session):
            if not topics:
                break
            ask, ident, later = topics.pop(0)
            if instructions and s <= 2 + sessions // 4:
                said, question = instructions.pop(0)
                turns.append({"speaker": USER, "text": said})
                evidence[question] = f"D{s}:{len(turns)}"
                turns.append({"speaker": ASSISTANT, "text": "Noted, I'll keep that in mind."})
            turns.append({"speaker": USER, "text": ask})
            turns.append({"speaker": ASSISTANT, "text": long_answer(rng, ident)})
            evidence[later] = f"D{s}:{len(turns)}"
            turns.append({"speaker": USER, "text": "Thanks, that works."})
        for _ in range(fillers):  # answers nobody asks about later
            w1, w2 = rng.sample(GENERIC, 2)
            turns.append({"speaker": USER, "text": f"Could you refactor my {w1} {w2} function so it is easier to test?"})
            turns.append({"speaker": ASSISTANT, "text": long_answer(rng, f"{w1}_{w2}_{rng.randint(1, 99)}")})
        for t, turn in enumerate(turns, start=1):
            turn["dia_id"] = f"D{s}:{t}"
        conv[f"session_{s}"] = turns
    said = {q for _, q in INSTRUCTIONS}  # category 3 (the table's "open-domain" column): instructions
    qa = [{"question": q, "answer": "", "evidence": [e], "category": 3 if q in said else 4} for q, e in evidence.items()]
    return {"sample_id": f"techchat-{seed}", "conversation": conv, "qa": qa}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m benchmarks.retrieval.locomo_techchat", description=__doc__.split("\n\n")[0])
    p.add_argument("out", help="where to write the LOCOMO-format JSON")
    p.add_argument("--sessions", type=int, default=8)
    p.add_argument("--seed", type=int, nargs="+", default=[7], help="one conversation per seed")
    args = p.parse_args(argv)
    samples = [build(args.sessions, seed) for seed in args.seed]
    Path(args.out).write_text(json.dumps(samples, indent=1))
    print(f"{args.out}: {len(samples)} conversations, {sum(len(s['qa']) for s in samples)} questions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
