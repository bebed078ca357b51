"""The model boundary, measured: per provider profile and add mode, chat requests per add and
refused requests, and the demo conversation's tokens per stage.

Every provider profile of the scripted server (graphmem/testing/providers.py) runs the conformance
conversation (graphmem/testing/conformance.py: 3 adds, the second retiring a relation and a memory)
in both add modes (staged, single_pass) through graphmem's real client over HTTP, one client per
profile and mode, on the embedded store. Requests are counted by the server (refused ones included);
"same graph" compares with the plain ``openai`` profile in the same mode. One extra row per mode
shows vLLM without auto tool choice configured with ``structured_output: json``. Then
``graphmem demo``'s stories run on the scripted server and their tokens per stage are printed (the
scripted server counts tokens as characters / 4 of what it received and sent, not a real tokenizer).

    python -m benchmarks.cost.model_boundary
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections import Counter
from pathlib import Path

from benchmarks.common import table
from graphmem.cli.demo import run_demo
from graphmem.stores.embedded import EmbeddedStore
from graphmem.testing.conformance import run_conversation, summary
from graphmem.testing.providers import PROFILES, ProviderProfile

DIMS = 64


MODES = ("staged", "single_pass")
#: a configuration that turns vLLM-without-auto-choice's one request per tool into one per add
VLLM_JSON = dataclasses.replace(PROFILES["vllm-no-auto-choice"], name="vllm-no-auto-choice + json",
                                client_config={"structured_output": "json"})


def profile_rows() -> list[list[object]]:
    rows: list[list[object]] = []
    for mode in MODES:
        reference = None
        for profile in [*PROFILES.values(), VLLM_JSON]:
            row, outcome = profile_row(profile, mode)
            reference = reference or outcome  # the plain openai profile comes first
            rows.append([*row, "yes" if outcome == reference else "NO"])
    return rows


def profile_row(profile: ProviderProfile, mode: str) -> tuple[list[object], object]:
    """One profile's conversation in ``mode`` on a fresh embedded store: its row and its outcome."""
    with tempfile.TemporaryDirectory() as tmp:
        store = EmbeddedStore(path=Path(tmp) / "graph", embedding_dims=DIMS)
        run = run_conversation(profile, store, DIMS, mode)
        try:
            refused = Counter(run.server.refusals())
            row: list[object] = [
                profile.name,
                mode,
                " / ".join(str(n) for n in run.requests_per_add),
                " / ".join(str(n) for n in run.refused_per_add),
                ", ".join(f"{k} {n}" for k, n in sorted(refused.items())) or "-",
                "; ".join(getattr(run.memory.llm, "adapted", [])) or "-",
            ]
            return row, summary(run.everything)
        finally:
            run.server.stop()
            run.memory.close()


def main() -> None:
    headers = ["profile", "add mode", "requests per add (3 adds)", "refused per add", "refused by kind (per client)", "adapted", "same graph"]
    print(table(headers, profile_rows()))
    lines: list[str] = []
    run_demo(None, out=lines.append)
    start = next(i for i, line in enumerate(lines) if line.strip().startswith("Tokens per stage"))
    print("\ngraphmem demo (scripted server):")
    print("\n".join(lines[start:]).strip())


if __name__ == "__main__":
    main()
