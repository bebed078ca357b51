"""The model clients built ahead, on a daemon thread (``MemoryConfig.warm_up``), so the first add
does not pay for them."""

from __future__ import annotations

import logging
import threading

from graphmem.embeddings import Embedder
from graphmem.llm import LLM
from graphmem.retrieval import when

log = logging.getLogger(__name__)


def prepare_in_background(llm: LLM, graph_llm: LLM, embedder: Embedder) -> threading.Thread:
    """Build the model clients and load the time parser on a daemon thread, so the first add does
    not pay for them (measured in docs/add-modes.md: about 0.5 s in a fresh process, 0.1-0.2 s for
    each new Memory). Nothing is sent; what cannot be built fails on first use, as before."""

    def prepare() -> None:
        try:
            for part in {id(p): p for p in (llm, graph_llm)}.values():
                part.prepare()
            embedder.prepare()
            when.warm_parser()
        except Exception as exc:  # noqa: BLE001 - a user's own LLM or embedder may raise: its first use will say why
            log.debug("preparing the model clients ahead failed: %s", exc)

    thread = threading.Thread(target=prepare, name="graphmem-prepare", daemon=True)
    thread.start()
    return thread
