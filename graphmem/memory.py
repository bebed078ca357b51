"""The public facade: ``Memory``, mem0-compatible."""

from __future__ import annotations

import inspect
import logging
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from datetime import date, datetime
from functools import partial
from typing import Any, Literal, overload

from graphmem.config import MemoryConfig
from graphmem.embeddings import Embedder
from graphmem.errors import ClosedError, ConfigError, InvalidInputError, NotFoundError
from graphmem.factory import build_embedder, build_llm, build_store
from graphmem.ingest import checks, edits
from graphmem.ingest.add import AddOutcome, AddPipeline
from graphmem.ingest.bulk import BulkAdder, ProgressCallback
from graphmem.ingest.commit import commit_add, nothing_added
from graphmem.ingest.context import Summarizer
from graphmem.ingest.idempotency import Seal, keyed, seal_for
from graphmem.ingest.messages import for_extraction, parse_messages
from graphmem.ingest.prepare import prepare_in_background
from graphmem.ingest.single_pass import SinglePassPipeline
from graphmem.ingest.verbatim_add import add_verbatim
from graphmem.lifecycle import provenance
from graphmem.lifecycle.history import History
from graphmem.lifecycle.reserve import Reserve
from graphmem.lifecycle.retention import Retention, expiration
from graphmem.llm import LLM
from graphmem.llm.limits import limited
from graphmem.llm.usage import Usage, metered, totals
from graphmem.observability.decorators import traced_methods
from graphmem.results import MemoryResult, SearchResult
from graphmem.retrieval import SearchPreset, get_preset, halves
from graphmem.retrieval.agreement import agree
from graphmem.retrieval.graph import search_relations
from graphmem.retrieval.hubness import query_vectors
from graphmem.retrieval.memories import search_memories
from graphmem.retrieval.rerank import Reranker
from graphmem.retrieval.scale import on_scale
from graphmem.retrieval.when import annotate_times, parse_query
from graphmem.schema import arguments
from graphmem.schema.counts import counted
from graphmem.schema.filters import scope_and_filter
from graphmem.schema.type_filters import TypeFilter
from graphmem.stages.facts import FactExtractionStage
from graphmem.stages.graph_extraction import GraphExtractionStage
from graphmem.stages.invalidation import InvalidationStage
from graphmem.stages.memory_update import MemoryUpdateStage
from graphmem.stages.self_refs import SELF_WORDS
from graphmem.stages.single_pass import SinglePassStage
from graphmem.stages.summary import SummaryStage
from graphmem.stores.base import GraphStore
from graphmem.types import (
    MemoryItem,
    Owners,
    Relation,
    Scope,
    canonical_name,
    parse_time,
    utcnow,
)

log = logging.getLogger(__name__)

Result = dict[str, Any]
#: relations ranked before a type filter cuts them to the limit
RELATION_CANDIDATES = 1000


@traced_methods  # a span per public call when tracing is on (observability/)
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
        reranker: Reranker | None = None,
    ) -> None:
        self.reranker = reranker  # optional search stage (graphmem.retrieval.rerank); None: off
        self.config = config if isinstance(config, MemoryConfig) else MemoryConfig.load(config)
        limits = self.config.llm_limits
        self.llm = limited(llm or build_llm(self.config.llm), limits.max_concurrency, limits.requests_per_minute)
        # mem0's graph_store.llm drives the graph stages only (entities, relations, invalidation);
        # facts, memory update and summaries stay on ``llm``
        graph_llm = self.config.graph_store.llm
        self.graph_llm = (
            limited(build_llm(graph_llm), limits.max_concurrency, limits.requests_per_minute) if graph_llm is not None else self.llm
        )
        self.embedder = embedder or build_embedder(self.config.embedder)
        wanted = self.config.embedder.embedding_dims
        if embedder is None and wanted is not None and wanted != self.embedder.dims:
            raise ConfigError(f"embedder.config.embedding_dims is {wanted}, but the {self.embedder.name} model makes {self.embedder.dims}")
        self.store = store or build_store(self.config.graph_store, self.embedder.dims, self.config.warm_up,
                                          getattr(self.embedder, "precision", "fp32"))
        self.store.setup()
        self.history_log = History(self.config.history_db_path)
        self._reserve = Reserve.beside(self.config.history_db_path)  # room for deletes on a full disk (reserve.py)
        if not self.store.read_only:  # a reader must not settle the owner's in-flight adds
            self.history_log.repair_at_start(self.store.get_memory)
        self._add = self._pipeline()
        self._retention = Retention(self.config.retention, self.store, self.history_log)
        self._summarizer = Summarizer(self.store, SummaryStage(self.llm), self.config.context.summary_every, self.config.context.max_messages)
        # a search's relation query, beside its memory query (store.concurrent_reads); shared by searches in flight
        self._search_pool = ThreadPoolExecutor(max_workers=16, thread_name_prefix="graphmem-search")
        # the background work last: started earlier, its threads would share the interpreter with the
        # rest of this constructor and slow it down (Memory.from_config on Neo4j, docs/benchmarks.md)
        self.store.warm()  # the store's own setting decides (build_store folds warm_up into it)
        self._preparing = prepare_in_background(self.llm, self.graph_llm, self.embedder) if self.config.warm_up else None

    def _pipeline(self) -> AddPipeline:
        """The add pipeline of ``add_mode``: both share stages, resolution and the write."""
        parts: dict[str, Any] = dict(
            store=self.store,
            embedder=self.embedder,
            extraction=GraphExtractionStage(self.graph_llm, self.config.graph_store.custom_prompt, self.config.graph_store.ontology),
            invalidation=InvalidationStage(self.graph_llm, self.config.custom_invalidation_prompt),
            facts=FactExtractionStage(self.llm, self.config.custom_fact_extraction_prompt),
            memory_update=MemoryUpdateStage(self.llm, self.config.custom_update_memory_prompt),
            threshold=self.embedder.cosine_for(self.config.graph_store.threshold),  # relative: the model's own cosine
            recent_messages=self.config.context.recent_messages,
            similar_threshold=self.embedder.cosine_for(self.config.similar_memory_threshold),
            read_log=self._reads_log,
            keep_messages=self.config.context.max_messages,
        )
        if self.config.add_mode == "single_pass":
            single = SinglePassStage(self.llm, parts["extraction"], self.config.custom_fact_extraction_prompt)
            return SinglePassPipeline(single, **parts)
        return AddPipeline(**parts)

    @property
    def _reads_log(self) -> bool:
        return self.config.context.recent_messages > 0 or self.config.context.summary_every > 0

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
        expiration_date: date | datetime | str | None = None,
        memory_type: str | None = None,
        prompt: str | None = None,
        idempotency_key: str | None = None,
    ) -> Result:
        """Remember ``messages`` for the scope.

        ``infer=True``: extract facts (the vector memory) and entities + relations (the graph),
        reconcile them with what the scope holds, and write everything in one transaction.
        ``infer=False``: store each message verbatim as a memory (no LLM call).
        ``timestamp`` is when the messages were said (default now); relations without a date of
        their own start then. The add commits whole or not at all.
        ``expiration_date`` (a date: to the end of that day, UTC; or an exact time): the memories and
        logged messages of this add are invisible from then on and purged later (see retention.py).
        ``prompt`` (mem0's) replaces the fact-extraction prompt for this add; ``memory_type`` only
        accepts None (mem0's procedural memory is not supported).
        ``idempotency_key``: a retry with the same key in the same scope returns the first add's
        result and writes nothing; with other messages or options it raises IdempotencyConflictError
        (ingest/idempotency.py). A write whose commit outcome is unknown raises WriteOutcomeUnknown.
        """
        scope = Scope.of(user_id, agent_id, run_id)
        if memory_type is not None:
            raise InvalidInputError(f"memory_type {memory_type!r} is not supported (graphmem has no procedural memory)")
        if prompt is not None and (not isinstance(prompt, str) or not prompt.strip()):
            raise InvalidInputError("prompt must be a non-empty string")
        metadata, infer = checks.checked_metadata(metadata), arguments.check_flag("infer", infer)
        reference_time = checks.reference_time(timestamp)
        expiration(expiration_date, utcnow())  # a bad date fails before any work (a past one is expired at once)
        request = {"messages": messages, "metadata": metadata, "infer": infer, "timestamp": timestamp,
                   "expiration_date": expiration_date, "prompt": prompt}
        seal = seal_for(self.store, scope, idempotency_key, request, partial(self.history_log.settle, self.store.get_memory))
        with metered() as meter:  # this add's requests only, whatever else runs beside it
            result = keyed(seal, lambda: self._add_checked(scope, messages, metadata, reference_time, infer, expiration_date,
                                                           prompt=prompt, seal=seal))
        result["usage"] = meter.as_dict()
        return result

    def usage(self) -> Usage:
        """What this instance asked of the model and the embedder so far (the servers' own token
        counts), with ``by_stage`` and ``refused_requests`` (400s the client adapted to)."""
        llms = [self.llm.usage] if self.graph_llm is self.llm else [self.llm.usage, self.graph_llm.usage]
        return totals(llms, self.embedder.calls)

    def _add_checked(
        self, scope: Scope, messages: Any, metadata: dict[str, Any], reference_time: datetime, infer: bool,
        expiration_date: Any = None, key: str | None = None, prompt: str | None = None, seal: Seal | None = None,
    ) -> Result:
        """One add of checked arguments; ``key``: a bulk import's idempotency key, written with the add;
        ``prompt``: the fact-extraction prompt of this add (mem0's ``add(prompt=...)``); ``seal``: an
        add(idempotency_key=...)'s (its answer is written with the add)."""
        if not infer:
            return add_verbatim(self, scope, messages, metadata, reference_time, expiration_date, key, seal)
        parsed = for_extraction(parse_messages(messages, self.config.max_message_chars))
        if not parsed:
            return nothing_added(self.store, self.history_log, scope, seal)
        # read-decide-write of one scope never interleaves; the lock and the log read are one round trip
        with self.store.locked_conversation(scope, self._add.log_limit) as conversation:
            if seal is not None and (first := seal.replay()) is not None:  # the same key committed while this one waited
                return first
            outcome = self._add.plan(scope, parsed, reference_time, metadata, prompt, conversation=conversation)
            self._retention.stamp(outcome.write, expiration_date)
            if key is not None and outcome.write is not None:
                outcome.write.idempotency_key = key
            if outcome.write is not None:
                annotate_times(outcome.write.memories, reference_time)
            result: Result = {"add_id": outcome.add_id, "results": outcome.results(), "relations": outcome.relations()}
            if self.config.graph_store.ontology is not None:
                result["off_ontology"] = outcome.off_ontology  # what the model returned outside the ontology, dropped
            if outcome.dropped_counts():
                result["dropped"] = outcome.dropped_counts()
            if seal is not None:
                outcome.write = seal.apply(outcome.write, scope, result)
            self._commit(outcome, seal.key if seal else None)
        self._retention.maybe_purge()
        self._maybe_summarize(scope, outcome)
        return result

    def add_many(
        self,
        items: Iterable[dict[str, Any]],
        *,
        infer: bool = True,
        batch_size: int | None = None,
        workers: int | None = None,
        progress: ProgressCallback | None = None,
        stop: threading.Event | None = None,
    ) -> Result:
        """Many adds: each item a dict with ``messages``, the scope ids, and optionally ``metadata``,
        ``timestamp`` and ``key`` (an idempotency key: an item whose key was imported before is
        skipped). ``infer=False`` writes ``batch_size`` adds per transaction with one embedding call;
        ``infer=True`` runs ``workers`` scopes at once, each scope's adds in order. A bad item is
        reported in ``failed`` and the others go on. ``progress`` is called with a BulkProgress after
        each batch (or add); setting ``stop`` ends the run after the running batch. Returns
        {"added", "skipped", "failed": [{"index", "key", "error"}], "adds": [{"index", "key", "add_id"}] (the
        committed items' add ids), "messages", "seen", "stopped"}. See graphmem/ingest/bulk.py."""
        adder = BulkAdder(self, infer, batch_size or self.config.bulk.batch_size, workers or self.config.bulk.workers, progress, stop)
        return adder.run(items)

    def _maybe_summarize(self, scope: Scope, outcome: AddOutcome) -> None:
        if self._summarizer.is_due(outcome.conversation):
            self._summarizer.schedule(scope)

    def flush(self, timeout: float | None = 60.0) -> None:
        """Wait for background work (rolling summaries) to finish."""
        self._summarizer.drain(timeout)

    def summarize(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> Result:
        """Regenerate the scope's rolling summary now (waits for it)."""
        scope = Scope.of(user_id, agent_id, run_id)
        return {"summary": self._summarizer.run(scope)}

    def get_summary(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> str | None:
        """The scope's rolling summary, or None before the first one."""
        return self.store.conversation(Scope.of(user_id, agent_id, run_id), 0).summary

    def _commit(self, outcome: AddOutcome, key: str | None = None) -> None:
        """Write the add; the history rows are staged before and committed after (ingest/commit.py)."""
        commit_add(self.store, self.history_log, outcome, self.config.context.max_messages, key)

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
        known_at: datetime | str | None = None,
        preset: str | SearchPreset | None = None,
        entity_types: list[str] | None = None,
        relationship_types: list[str] | None = None,
        hops: int = 1,
        rerank: bool = True,
    ) -> SearchResult:
        """Memories and relations relevant to ``query``: no LLM call, one embedding, two or three store
        queries (the third fetches neighbouring messages and dated memories when the preset asks).

        ``filters``: mem0's filter language (graphmem.schema.filters; scope ids may sit inside it).
        ``threshold``: minimum similarity of a memory, relative to the embedder's scale (0 unrelated,
        1 identical; MiniLM's cosine; Embedder.cosine_for). ``as_of`` (event time): relations valid then and
        memories true then; default now. ``known_at`` (transaction time): what graphmem believed at
        that moment. ``entity_types`` / ``relationship_types``: only relations with an endpoint of
        one of these types / of one of these relationship types (graphmem.schema.type_filters). ``rerank``:
        with a reranker given to ``Memory(reranker=...)``, False skips it for this search (mem0's
        flag); without one, results are ranked by the fused hybrid score either way.
        ``hops=2``: relations two hops from the seed entities too, each with its ``path``.
        """
        scope, flt = scope_and_filter(user_id, agent_id, run_id, filters)
        types = TypeFilter.of(entity_types, relationship_types)
        query, threshold = arguments.check_search(query, hops, limit, threshold)
        if not query:
            return {"results": [], "relations": []}
        chosen = get_preset(preset)
        when = parse_time(as_of, field_name="as_of")
        known = parse_time(known_at, field_name="known_at")
        chosen, threshold = on_scale(chosen, threshold, self.embedder)
        wanted = RELATION_CANDIDATES if types.active else limit  # filtered before the cut
        embedding, memories, relations = self._find(scope, query, flt, chosen, limit, wanted, threshold, when, known, hops, rerank)
        memories = agree(self.store, scope, memories, relations, embedding, when, known)
        relations = types.apply(relations, limit)
        return {"results": [m.to_dict() for m in memories], "relations": [r.to_dict() for r in relations]}

    def _find(
        self, scope: Scope, query: str, flt: Any, chosen: SearchPreset, limit: int, wanted: int, threshold: float | None,
        when: datetime | None, known: datetime | None, hops: int, rerank: bool,
    ) -> tuple[list[float], list[MemoryItem], list[Relation]]:
        """A search's store reads on checked arguments: the query's vectors (and the time it asks
        about, for a preset that weighs time), then its memory and relation halves."""
        embedding, centre = query_vectors(self.embedder, query)
        asked = parse_query(query, when or known or utcnow()) if chosen.weights.get("time") else None
        find_relations = partial(search_relations, self.store, scope, query, embedding, chosen, wanted,
                                 as_of=when, known_at=known, hops=hops, filters=flt, centre=centre)
        find_memories = partial(search_memories, self.store, scope, query, embedding, chosen, limit, flt, when, threshold,
                                asked, known, self.reranker if rerank else None)
        memories, relations = halves.read_both(self._search_pool, self.store.concurrent_reads, find_memories, find_relations)
        return embedding, memories, relations

    def get_all(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
        include_invalidated: bool = False,
        limit: int = 100,
        entity_types: list[str] | None = None,
        relationship_types: list[str] | None = None,
        filters: dict[str, Any] | None = None,
    ) -> SearchResult:
        """The scope's memories and relations, oldest first; ``filters`` as in ``search``."""
        scope, flt = scope_and_filter(user_id, agent_id, run_id, filters)
        arguments.check_listing(limit, include_invalidated)
        types = TypeFilter.of(entity_types, relationship_types)
        memories = self.store.list_memories(scope, include_deleted=include_invalidated, limit=limit, filters=flt)
        relations = self.store.get_all(
            scope, include_invalidated=include_invalidated, limit=None if types.active else limit, filters=flt
        )
        relations = types.apply(relations, limit)
        return {"results": [m.to_dict() for m in memories], "relations": [r.to_dict() for r in relations]}

    def timeline(
        self,
        entity: str,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> Result:
        """Every version of every relation touching ``entity``, in event-time order, with both time
        axes. ``entity`` may be "I" / "me" for the scope's own node."""
        scope = Scope.of(user_id, agent_id, run_id)
        arguments.entity_name(entity)
        key = canonical_name(entity)
        if key in SELF_WORDS:
            key = canonical_name(scope.self_name)
        return {"entity": entity.strip(), "relations": [r.to_dict() for r in self.store.timeline(scope, key)]}

    def get(self, memory_id: str, *, owners: Owners | None = None) -> MemoryResult | None:
        """One memory by id, or None (soft-deleted memories are None too). ``owners`` (graphmem.types.Owners):
        None also for a memory of another user, decided by the store before the memory is loaded."""
        item = self._memory(memory_id, must_exist=False, owners=owners)
        return item.to_dict() if item else None

    def update(self, memory_id: str, data: str, metadata: dict[str, Any] | None = None) -> Result:
        """Replace a memory's text (re-embedded); recorded in its history. ``metadata`` keys are
        merged into the memory's metadata (mem0's rule: keys not given are kept). A memory deleted
        meanwhile is NotFoundError, with nothing written (ingest/edits.py)."""
        item = self._memory(memory_id)
        text = arguments.update_text(data)
        return edits.update(self.store, self.embedder, self._commit, item, text, metadata)

    def delete(self, memory_id: str) -> Result:
        """Remove a memory for good; the history keeps a DELETE event. Of concurrent deletes of one
        memory one succeeds, the others raise NotFoundError (ingest/edits.py). On a full disk it
        still works (lifecycle/reserve.py)."""
        return self._reserve.freeing(partial(edits.delete, self.store, self.history_log, self._memory(memory_id)))

    def history(self, memory_id: str, *, owners: Owners | None = None) -> list[dict[str, Any]]:
        """Every change of a memory, oldest first (mem0's columns). Rows of writes whose outcome was
        unknown are settled against the store first (lifecycle/history.py). ``owners``: only their rows."""
        if not isinstance(memory_id, str):
            raise InvalidInputError("memory_id must be a string")
        if not self.store.read_only:
            self.history_log.settle(self.store.get_memory)
        return self.history_log.history(arguments.check_text("memory_id", memory_id), owners)

    def provenance(self, add_id: str, *, user_id: str | None = None, agent_id: str | None = None,
                   run_id: str | None = None) -> dict[str, Any]:
        """Why a relation is believed: the messages, memory events and relation versions of the add
        ``add_id`` (a relation's ``provenance["added_by"]`` / ``["retired_by"]``) in this scope
        (lifecycle/provenance.py). An add of another scope reads as one that brought nothing."""
        scope = Scope.of(user_id, agent_id, run_id)
        if not isinstance(add_id, str) or not add_id.strip():
            raise InvalidInputError("add_id must be a non-empty string (a relation's provenance names one)")
        return provenance.explain(self.store, self.history_log, scope, arguments.check_text("add_id", add_id.strip()),
                                  self.config.context.max_messages)

    @overload
    def _memory(self, memory_id: Any) -> MemoryItem: ...
    @overload
    def _memory(self, memory_id: Any, must_exist: Literal[False], owners: Owners | None = None) -> MemoryItem | None: ...

    def _memory(self, memory_id: Any, must_exist: bool = True, owners: Owners | None = None) -> MemoryItem | None:
        if not isinstance(memory_id, str) or not memory_id.strip():
            raise InvalidInputError("memory_id must be a non-empty string")
        item = edits.live(self.store, arguments.check_text("memory_id", memory_id).strip(), owners)
        if item is None:
            if must_exist:
                raise NotFoundError(f"no memory with id {memory_id!r}")
            return None
        return item

    def delete_all(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> Result:
        """Remove the scope's entities, relations, memories and logged messages; the counts say what went."""
        scope = Scope.of(user_id, agent_id, run_id)
        memories = len(self.store.list_memories(scope))  # counted first: the stores report entities only
        removed = self._reserve.freeing(partial(self.store.delete_all, scope))
        return {"message": f"Deleted {counted(memories, 'memory')} and {counted(removed, 'entity')} (with their relations)",
                "deleted_entities": removed, "deleted_memories": memories}

    # -- retention and erasure (retention.py) ----------------------------------------------------

    def purge_expired(self) -> Result:
        """Remove every expired memory and logged message now (they are already invisible), with
        their history rows; returns the counts."""
        return self._reserve.freeing(self._retention.purge)

    def forget(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> Result:
        """Erase everything written with these ids (a user's runs too): graph, memories, conversation
        log and summary, and their history rows (the audit log keeps only that an erasure happened)."""
        scope = _erasable(Scope.of(user_id, agent_id, run_id))
        self._summarizer.drain()  # a summary in flight would write the scope back
        with self.store.scope_lock(scope):  # an add of the scope in flight finishes first
            return self._reserve.freeing(partial(self._retention.forget, scope))

    def forget_entity(
        self, name: str, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None
    ) -> Result:
        """Erase one entity of the scope: the node with its relations, the memories and logged messages
        that mention it (whole word, any case), the rolling summary when it mentions it (rewritten
        later from the remaining messages), and the history rows of all of these."""
        scope = _erasable(Scope.of(user_id, agent_id, run_id))
        arguments.entity_name(name)
        if canonical_name(name) in SELF_WORDS:
            name = scope.self_name
        self._summarizer.drain()
        with self.store.scope_lock(scope):
            return self._reserve.freeing(partial(self._retention.forget_entity, scope, name))

    def reset(self) -> None:
        """Remove everything graphmem stored, for every scope, and the history."""
        self.store.reset()
        self.history_log.reset()

    def close(self) -> None:
        """Finish pending background summaries, then release the store and the history log.
        Closing twice is harmless; any other method of a closed Memory raises ClosedError."""
        if self.__dict__.get("_closed"):
            return
        self._closed = True
        self._summarizer.close()
        self._add.close()
        self._search_pool.shutdown(wait=True)
        self.store.close()
        self.history_log.close()
        # every public method, whoever added it, now fails clearly instead of deep in a driver
        for name in dir(type(self)):
            method = inspect.getattr_static(type(self), name)
            if not name.startswith("_") and name != "close" and inspect.isfunction(method):
                setattr(self, name, _closed_method(name))

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _closed_method(name: str) -> Callable[..., Any]:
    def closed(*args: Any, **kwargs: Any) -> Any:
        raise ClosedError(f"Memory.{name}() called after close(); create a new Memory")

    closed.__name__ = name
    return closed


def _erasable(scope: Scope) -> Scope:
    """Erasure works on a whole partition, the one a read of the owner id sees (its user, else its
    agent, else its run). A scope that narrows it (user + run) is refused rather than half-erased:
    entities and the conversation log are shared by the partition's runs and agents."""
    if scope.narrowing:
        named = ", ".join(f"{k}={v!r}" for k, v in scope.narrowing.items())
        raise InvalidInputError(
            f"forget erases a whole partition: name only its owner id (not {named}); "
            "delete_all with these ids removes their memories and relations"
        )
    return scope
