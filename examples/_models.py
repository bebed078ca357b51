"""Shared by the examples: a real model when OPENAI_API_KEY is set, else graphmem's fake model.

The fake (graphmem.testing.FakeModel) is an OpenAI-compatible server on 127.0.0.1 that answers the
extraction stages from a script (what a model would have extracted from each example message) and
serves deterministic embeddings, so every example runs offline with no key and no download.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from graphmem.testing import FakeModel


@contextmanager
def models(script: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """A graphmem config (llm, embedder, a temporary embedded store): OpenAI if a key is set, else the fake.

    ``script``: for the fake, entries of FakeModel.when: {"text", "facts", "entities", "relations", "retire"}.
    """
    with tempfile.TemporaryDirectory(prefix="graphmem-example-") as tmp:
        store = {"graph_store": {"provider": "embedded", "config": {"path": str(Path(tmp) / "graph")}},
                 "history_db_path": str(Path(tmp) / "history.db")}
        if os.environ.get("OPENAI_API_KEY"):
            print("(using OpenAI: OPENAI_API_KEY is set)")
            yield store
            return
        with FakeModel() as fake:
            for entry in script:
                fake.when(entry["text"], facts=entry.get("facts"), entities=entry.get("entities", ()),
                          relations=entry.get("relations", ()), retire=entry.get("retire", ()))
            print(f"(no OPENAI_API_KEY: using graphmem's fake model at {fake.base_url})")
            yield {**fake.config(), **store}
