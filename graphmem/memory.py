"""The public facade: ``Memory``, mem0-compatible."""

from __future__ import annotations

import logging
from datetime import datetime
from typing import Any

from graphmem.config import MemoryConfig
from graphmem.embeddings import Embedder
from graphmem.errors import InvalidInputError
from graphmem.factory import build_embedder, build_llm, build_store
from graphmem.llm import LLM
from graphmem.messages import for_extraction, parse_messages
from graphmem.pipeline import AddPipeline
from graphmem.retrieval import SearchPreset, get_preset
from graphmem.retrieval.graph import search_relations
from graphmem.stages.graph_extraction import GraphExtractionStage
from graphmem.stages.invalidation import InvalidationStage
from graphmem.stores.base import GraphStore
from graphmem.types import Scope, parse_time, utcnow

log = logging.getLogger(__name__)

Result = dict[str, Any]


class Memory:
    """Long-term memory for agents: a per-scope knowledge graph with time.

    ``Memory()`` uses the embedded store under ``~/.graphmem`` and OpenAI (``OPENAI_API_KEY``).
    ``Memory.from_config({...})`` takes mem0's configuration keys. ``llm``, ``embedder`` and
    ``store`` may be passed directly (already-built parts win over the config).
    """

    def __init__(
        self,
        config: MemoryConfig | dict[str, Any] | None = None,
        *,
        llm: LLM | None = None,
        embedder: Embedder | None = None,
        store: GraphStore | None = None,
    ) -> None:
        self.config = config if isinstance(config, MemoryConfig) else MemoryConfig.load(config)
        graph_llm_config = self.config.graph_store.llm or self.config.llm
        self.llm = llm or build_llm(graph_llm_config)
        self.embedder = embedder or build_embedder(self.config.embedder)
        self.store = store or build_store(self.config.graph_store, self.embedder.dims)
        self.store.setup()
        self._add = AddPipeline(
            store=self.store,
            embedder=self.embedder,
            extraction=GraphExtractionStage(self.llm, self.config.graph_store.custom_prompt),
            invalidation=InvalidationStage(self.llm, self.config.custom_invalidation_prompt),
            threshold=self.config.graph_store.threshold,
        )

    @classmethod
    def from_config(cls, config_dict: dict[str, Any]) -> Memory:
        return cls(MemoryConfig.load(config_dict))

    def __repr__(self) -> str:
        return f"Memory(llm={self.llm!r}, embedder={self.embedder.name!r}, store={type(self.store).__name__})"

    # -- writing --------------------------------------------------------------------------------

    def add(
        self,
        messages: Any,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        metadata: dict[str, Any] | None = None,
        infer: bool = True,
        timestamp: datetime | str | None = None,
    ) -> Result:
        """Extract entities and relations from ``messages`` and merge them into the scope's graph.

        ``timestamp`` is when the messages were said (default now); relations without a date of
        their own start then. The add commits whole or not at all.
        """
        scope = Scope.of(user_id, agent_id, run_id)
        if metadata is not None and not isinstance(metadata, dict):
            raise InvalidInputError("metadata must be a dict")
        reference_time = parse_time(timestamp) or utcnow()
        parsed = for_extraction(parse_messages(messages, self.config.max_message_chars))
        if not parsed or not infer:
            return {"results": [], "relations": []}
        outcome = self._add.run(scope, parsed, reference_time)
        return {"results": [], "relations": outcome.relations()}

    # -- reading --------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        limit: int = 100,
        filters: dict[str, Any] | None = None,
        threshold: float | None = None,
        as_of: datetime | str | None = None,
        preset: str | SearchPreset | None = None,
    ) -> Result:
        """Relations relevant to ``query`` (no LLM call): one embedding, one graph query."""
        scope = Scope.of(user_id, agent_id, run_id)
        if not isinstance(query, str):
            raise InvalidInputError(f"query must be a string, got {type(query).__name__}")
        _check_limit(limit)
        query = query.strip()
        if not query:
            return {"results": [], "relations": []}
        chosen = get_preset(preset)
        embedding = self.embedder.embed_one(query)
        relations = search_relations(self.store, scope, query, embedding, chosen, limit, as_of=parse_time(as_of, field_name="as_of"))
        if threshold is not None:
            relations = [r for r in relations if r.scores.get("vector", 0.0) >= threshold or r.scores.get("bm25", 0.0) > 0]
        return {"results": [], "relations": [r.to_dict() for r in relations]}

    def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        include_invalidated: bool = False,
        limit: int = 100,
    ) -> Result:
        scope = Scope.of(user_id, agent_id, run_id)
        _check_limit(limit)
        relations = self.store.get_all(scope, include_invalidated=include_invalidated, limit=limit)
        return {"results": [], "relations": [r.to_dict() for r in relations]}

    def delete_all(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> Result:
        scope = Scope.of(user_id, agent_id, run_id)
        removed = self.store.delete_all(scope)
        return {"message": f"Deleted {removed} entities and their relations", "deleted_entities": removed}

    def reset(self) -> None:
        """Remove everything graphmem stored, for every scope."""
        self.store.reset()

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _check_limit(limit: Any) -> None:
    if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
        raise InvalidInputError(f"limit must be a positive integer, got {limit!r}")
