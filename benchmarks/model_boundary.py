"""The model boundary, measured: per provider profile, chat requests per add and refused requests,
and the demo conversation's tokens per stage.

Every provider profile of the scripted server (graphmem/testing/providers.py) runs the conformance
conversation (graphmem/testing/conformance.py: 3 adds, the second retiring a relation and a memory)
through graphmem's real client over HTTP, one client per profile, on the embedded store. Requests are
counted by the server (refused ones included); "answered as" is how the client read the calls. Then
``graphmem demo``'s stories run on the scripted server and their tokens per stage are printed (the
scripted server counts tokens as characters / 4 of what it received and sent, not a real tokenizer).

    python -m benchmarks.model_boundary
"""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

from benchmarks.common import table
from graphmem.cli.demo import run_demo
from graphmem.stores.embedded import EmbeddedStore
from graphmem.testing.conformance import run_conversation, summary
from graphmem.testing.providers import PROFILES

DIMS = 64


def profile_rows() -> list[list[object]]:
    rows: list[list[object]] = []
    reference = None
    for name, profile in PROFILES.items():
        with tempfile.TemporaryDirectory() as tmp:
            run = run_conversation(profile, EmbeddedStore(path=Path(tmp) / "graph", embedding_dims=DIMS), DIMS)
            try:
                outcome = summary(run.everything)
                reference = reference or outcome
                refused = Counter(run.server.refusals())
                rows.append([
                    name,
                    " / ".join(str(n) for n in run.requests_per_add),
                    " / ".join(str(n) for n in run.refused_per_add),
                    ", ".join(f"{k} {n}" for k, n in sorted(refused.items())) or "-",
                    "; ".join(getattr(run.memory.llm, "adapted", [])) or "-",
                    "yes" if outcome == reference else "NO",
                ])
            finally:
                run.server.stop()
                run.memory.close()
    return rows


def main() -> None:
    headers = ["profile", "requests per add (3 adds)", "refused per add", "refused by kind (per client)", "adapted", "same graph"]
    print(table(headers, profile_rows()))
    lines: list[str] = []
    run_demo(None, out=lines.append)
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("Tokens per stage"))
    print("\ngraphmem demo (scripted server):")
    print("\n".join(lines[start:]).strip())


if __name__ == "__main__":
    main()
