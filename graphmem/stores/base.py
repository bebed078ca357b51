"""The store contract. Every store (neo4j, embedded) implements it and passes tests/contract/.

Rules every implementation keeps:
- Everything is scoped: a method never reads or writes outside the Scope it is given.
- ``write`` is atomic: all of a GraphWrite is applied or none of it.
- One method call is a bounded number of database round trips, independent of list lengths
  (``round_trips`` counts them so tests and benchmarks can check it).
- Relationship types arrive sanitised (types.sanitize_relation_type) and are still never pasted
  into query text.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime

from graphmem.schema.filters import Filter
from graphmem.stores.locks import locks_of
from graphmem.stores.memory_context import ContextQuery, MemoryContext
from graphmem.types import Conversation, Entity, GraphWrite, MemoryItem, Owners, Relation, Scope, canonical_name


@dataclass
class EntityCandidate:
    """An extracted entity to resolve against the scope's existing nodes."""

    canonical: str
    embedding: list[float]
    #: the memories mentioning the entity it resolves to are wanted (``GraphStore.resolve``)
    mention: bool = False


@dataclass
class Resolution:
    """What an add reads between extraction and invalidation (``GraphStore.resolve``)."""

    matches: list[Entity | None]  # aligned with the candidates, as match_entities
    relations: list[Relation]  # current relations around the matched entities, as relations_around
    similar: list[list[MemoryItem]]  # per fact embedding, as memory_candidates
    mentioning: list[MemoryItem]  # live memories mentioning any of mention_ids, newest first
    mention_ids: list[str]  # the matched entities of the candidates marked ``mention`` (sorted)


@dataclass
class AddContextQuery:
    """What a single-pass add reads before its one model request (``GraphStore.add_context``): the
    messages' embedding and text, and the bounds of every list (docs/add-modes.md says why)."""

    self_canonical: str  # the scope's own node, always a seed
    embedding: list[float]  # of the new messages
    text: str  # the new messages, matched against entity names by fulltext
    entity_k: int = 10  # seeds by vector and by name, each
    threshold: float = 0.3  # least cosine of a seed close to the messages
    relation_limit: int = 100  # current relations around the seeds, those of named seeds first
    similar_k: int = 5  # live memories most similar to the messages
    mention_limit: int = 20  # live memories mentioning the context's entities (the own node aside), newest first


@dataclass
class AddContext:
    """What the single request shows the model to reconcile with."""

    relations: list[Relation]  # current (not invalidated, not expired) relations around the seeds
    similar: list[MemoryItem]  # by cosine to the messages, best first (``score`` set)
    mentioning: list[MemoryItem]  # mentioning an endpoint of ``relations`` or a seed, newest first


@dataclass
class GraphQuery:
    """What the retriever asks the graph for: seeds by vector, by name text and by identity."""

    embedding: list[float]
    text: str
    seed_canonicals: list[str]  # entities seeded by exact name (e.g. the scope's own user for "my ...")
    top_k: int = 10  # vector / fulltext seeds
    threshold: float = 0.3  # minimum cosine of a vector seed
    as_of: datetime | None = None  # event time; None: now (see relation_visible)
    known_at: datetime | None = None  # transaction time; None: what graphmem believes now
    include_invalidated: bool = False  # every version, no time filter
    hops: int = 1  # 2: relations two hops from a seed too (the time filter on every relation of the path)
    hop_decay: float = 0.5  # a relation's seed scores are multiplied by this once per hop beyond the first
    filters: Filter | None = None  # graphmem.schema.filters, applied to relations (when it names relation fields)
    #: relations found by their own meaning: the scope's fact_top_k relations whose fact embedding is
    #: closest to ``embedding`` (cosine >= threshold, visible and filtered as the others), seed or not
    fact_top_k: int = 10
    #: per seed, at most this many of its relations (and of its two-hop paths, with each path's first
    #: hop): the closest to ``embedding`` by fact cosine (a path: its best hop's), plus up to as many
    #: whose fact (a path: its last relation's) contains one of ``fact_terms``, most terms first.
    #: Search sets it (a hub entity such as the user's own node holds hundreds of relations, far
    #: more than can reach the head); None: every relation (an add's reads, the agreement read)
    relation_pool: int | None = None
    fact_terms: list[str] = field(default_factory=list)  # lowercase words, matched as substrings of the fact
    #: how facts are scored (their ``vector`` score, the pool's and fact_top_k's order):
    #: ``fact . fact_embedding + fact_shift`` with the unit fact vector (retrieval.hubness: the query
    #: moved away from what every question shares); None: the plain cosine with ``embedding``
    fact_embedding: list[float] | None = None
    fact_shift: float = 0.0


@dataclass
class RelationFact:
    """A relation version's fact text and its embedding (``GraphStore.set_relation_facts``)."""

    relation_id: str
    source_id: str  # its source entity (how the Neo4j store finds the relationship: ids are not indexed)
    fact: str
    embedding: list[float]


def scope_of_key(key: str) -> Scope:
    """The owner's scope of a partition key (Scope.key: a JSON list [user_id, agent_id, run_id])."""
    user_id, agent_id, run_id = json.loads(key)
    return Scope(user_id, agent_id, run_id)


def relation_visible(
    valid_at: datetime | None,
    invalid_at: datetime | None,
    created_at: datetime | None,
    expired_at: datetime | None,
    as_of: datetime | None,
    known_at: datetime | None,
    now: datetime,
) -> bool:
    """THE time filter of relations; the Neo4j Cypher mirrors it (search_graph, get_all, timeline).

    - Transaction time (``known_at``): what graphmem believed at known_at: created_at <= known_at
      and not expired by then (expired_at IS NULL or known_at < expired_at). An ``invalid_at`` set
      by a later invalidation (expired_at not null) was not known then, so it is ignored.
    - Event time (``as_of``, default known_at, else now): valid_at <= as_of < invalid_at, open ends
      allowed. Pure event time: a relation retired today whose invalid_at lies in the future
      ("I'm moving out next month") is still valid until then.
    """
    if known_at is not None:
        if created_at is not None and created_at > known_at:
            return False
        if expired_at is not None and expired_at <= known_at:
            return False
        if expired_at is not None:
            invalid_at = None
    t = as_of or known_at or now
    return (valid_at is None or valid_at <= t) and (invalid_at is None or t < invalid_at)


@dataclass
class MemoryQuery:
    """What the retriever asks the memory index for."""

    embedding: list[float]
    text: str
    top_k: int = 10  # candidates per signal (vector, fulltext)
    filters: Filter | None = None  # graphmem.schema.filters, applied to memories (when it names memory fields)
    as_of: datetime | None = None  # event time: memories true at as_of (valid_at <= as_of < invalid_at)
    known_at: datetime | None = None  # transaction time: memories graphmem held then; both None: live ones


class GraphStore(ABC):
    """A per-scope knowledge graph of entities and bi-temporal relations."""

    #: True when the store refuses every change (the embedded store opened by a reader, see journal.py)
    read_only: bool = False
    #: database round trips made so far (a transaction of several statements counts each statement)
    round_trips: int = 0
    #: True when reads from several threads run in parallel (a database server): a search then runs its
    #: memory and relation queries at once. False for a store that serialises them anyway.
    concurrent_reads: bool = False

    @abstractmethod
    def setup(self) -> None:
        """Create schema (constraints, indexes) idempotently."""

    def warm(self) -> None:  # noqa: B027 - optional hook: most stores have nothing to prepare
        """Start preparing what the first add and search would otherwise pay for (a database's query
        plans), in the background, after ``setup``; never raises, never waits. Default: nothing."""

    @abstractmethod
    def match_entities(self, scope: Scope, candidates: list[EntityCandidate], threshold: float) -> list[Entity | None]:
        """Resolve each candidate to an existing entity of the scope, in one round trip.

        Exact canonical-name match wins; otherwise the most similar entity with cosine >= threshold;
        otherwise None. The result is aligned with ``candidates``; a returned Entity carries ``score``.
        """

    @abstractmethod
    def relations_around(self, scope: Scope, entity_ids: list[str]) -> list[Relation]:
        """Current relations (not invalidated, not expired) touching any of the entities; one round trip."""

    def resolve(
        self, scope: Scope, candidates: list[EntityCandidate], threshold: float, facts: list[list[float]], top_k: int,
        mention_limit: int,
    ) -> Resolution:
        """An add's reads before its invalidation stage: ``match_entities`` of the candidates,
        ``relations_around`` the matched entities, and ``memory_candidates`` of the fact embeddings
        and of the matched entities of the candidates marked ``mention``. One round trip on a
        database store (Neo4j overrides this); this default composes the three calls."""
        matches = self.match_entities(scope, candidates, threshold) if candidates else []
        known = sorted({m.id for m in matches if m is not None})
        relations = self.relations_around(scope, known) if known else []
        ids = sorted({m.id for c, m in zip(candidates, matches, strict=True) if c.mention and m is not None})
        similar, mentioning = self.memory_candidates(scope, facts, top_k, ids, mention_limit) if facts else ([], [])
        return Resolution(matches, relations, similar, mentioning, ids)

    def add_context(self, scope: Scope, query: AddContextQuery) -> AddContext:
        """A single-pass add's one read before its model request: the current relations around the
        seeds (the own node, the ``entity_k`` entities closest to the messages by vector and by name),
        the memories similar to the messages and the live memories mentioning the entities of those
        relations. Neo4j overrides it with one statement; this default composes ``search_graph``
        and ``memory_candidates`` (the embedded store: in-process reads, no round trip to save)."""
        graph = GraphQuery(query.embedding, query.text, [query.self_canonical], query.entity_k, query.threshold, fact_top_k=0)
        relations = [r for r in self.search_graph(scope, graph) if r.invalid_at is None and r.expired_at is None]
        relations = relations[: query.relation_limit]
        own = {i for r in relations for i, name in ((r.source_id, r.source), (r.destination_id, r.destination))
               if canonical_name(name) == query.self_canonical}
        ids = sorted({i for r in relations for i in (r.source_id, r.destination_id)} - own)
        similar, mentioning = self.memory_candidates(scope, [query.embedding], query.similar_k, ids, query.mention_limit)
        return AddContext(relations, similar[0] if similar else [], mentioning)

    @abstractmethod
    def write(self, write: GraphWrite) -> None:
        """Apply one add atomically, in this order: invalidations, entities, relations.

        Entities: create new ones (mentions 1) or touch existing ones (mentions + 1, updated_at).
        Relations: if a current instance of (source, type, destination) exists, add one mention,
        set updated_at and append the add id to provenance; otherwise create a new instance with
        valid_at / invalid_at from the write, created_at = write.at, provenance [add_id].
        Invalidations: set invalid_at, expired_at = write.at and retired_by = write.add_id on the named
        current relations of the scope (ids of other scopes or already-expired relations are ignored).
        A new instance stores the write's ``fact`` and ``fact_embedding``; a bumped one keeps its own,
        or takes the write's when it has none (a version written before facts).
        """

    @abstractmethod
    def search_graph(self, scope: Scope, query: GraphQuery) -> list[Relation]:
        """Relations around the query's seeds, in at most one round trip.

        Candidates: the relations around the seeds (entities by vector, by name text, by exact
        name), and the ``fact_top_k`` relations of the scope closest to the query by their fact
        embedding, seeded or not. Each returned relation carries ``fact`` and ``scores``: "vector"
        (cosine of the query and the relation's own fact embedding; 0 without one), "seed" (entity
        proximity: the best of a seeded endpoint's cosine to the query and 1.0 for an endpoint named
        exactly, decayed per hop) and "fulltext" (name text match of an endpoint, 0..1, decayed per
        hop). Filtering: ``relation_visible`` with the query's as_of / known_at (now when both are
        None), none with ``include_invalidated``.
        """

    @abstractmethod
    def set_relation_facts(self, scope: Scope, facts: list[RelationFact]) -> int:
        """Set the fact text and embedding of relation versions of the scope (every version, current
        or retired: ``graphmem reindex``), in one round trip; ids of other scopes or unknown ones are
        ignored. Returns how many versions were set."""

    @abstractmethod
    def scopes(self) -> list[Scope]:
        """Every partition that holds entities, as the owner's scope (Scope.key), in one round trip."""

    @abstractmethod
    def timeline(self, scope: Scope, canonical: str) -> list[Relation]:
        """Every version of every relation touching the entity with this canonical name, ordered by
        valid_at (then created_at); one round trip. Empty when the entity does not exist."""

    # -- memory facts (the vector memory) ------------------------------------------------------
    # Memory writes travel in GraphWrite.memories and are applied by ``write`` after relations,
    # in the same transaction: ADD creates (:Memory) linked by MENTIONS to entity_ids; UPDATE sets
    # text, hash, embedding, updated_at (metadata when not None) and adds MENTIONS links; DELETE
    # sets deleted_at = write.at. Memory ids of another scope are ignored.
    # Metadata is stored whole (JSON) and, for filtering, each top-level scalar value also as a
    # property ``meta.<key>``.

    @abstractmethod
    def similar_memories(self, scope: Scope, embeddings: list[list[float]], top_k: int = 5) -> list[list[MemoryItem]]:
        """For each embedding, the top_k live memories of the scope by cosine (score set); one round trip."""

    @abstractmethod
    def memory_candidates(
        self, scope: Scope, embeddings: list[list[float]], top_k: int, entity_ids: list[str], mention_limit: int = 20
    ) -> tuple[list[list[MemoryItem]], list[MemoryItem]]:
        """The memory-update stage's candidates in one round trip: ``similar_memories`` of the
        embeddings, and the live memories of the scope that MENTION any of ``entity_ids`` (newest
        first, at most ``mention_limit``). Every returned item carries ``mentions``."""

    @abstractmethod
    def search_memories(self, scope: Scope, query: MemoryQuery) -> list[MemoryItem]:
        """Candidates by vector (top_k by cosine) and by fulltext on the text (top_k), merged by id,
        with ``scores`` {"vector": cosine or 0, "fulltext": 0..1 normalised}; metadata filters and
        the time filter applied in the store; one round trip."""

    @abstractmethod
    def memory_context(self, scope: Scope, query: ContextQuery) -> MemoryContext:
        """One round trip: for each hit of ``query.ids`` (memories of the scope that were stored from
        messages, i.e. have a ``turn``), the eligible memories just before and after it in turn order
        within the hit's stored scope; and, when the query has a time range, the ``time_k`` eligible
        memories of the scope (by cosine) whose resolved times overlap it. Items carry
        ``scores={"vector": cosine}``."""

    @abstractmethod
    def get_memory(self, memory_id: str, owners: Owners | None = None) -> MemoryItem | None:
        """One memory by id, whatever its scope; soft-deleted ones too (deleted_at set). ``owners``:
        None when its user is not one of them, decided in the lookup before the memory is loaded."""

    @abstractmethod
    def list_memories(
        self, scope: Scope, include_deleted: bool = False, limit: int | None = None, filters: Filter | None = None
    ) -> list[MemoryItem]:
        """The scope's memories, oldest first; ``filters`` (graphmem.schema.filters) applied before the limit."""

    @abstractmethod
    def delete_memory(self, memory_id: str) -> bool:
        """Remove one memory for good (the public ``delete(id)``; soft-deleted ones too), a
        conditional write: False, with nothing written, when it does not exist (of concurrent
        deletes of one id, one gets True)."""

    # -- bulk writes (Memory.add_many, graphmem import) -------------------------------------------

    @abstractmethod
    def write_many(self, writes: list[GraphWrite]) -> None:
        """Apply several writes, in order, as one transaction: all of them or none. A write with an
        ``idempotency_key`` records it (see ``imported_keys``); a key that exists already fails the
        whole batch."""

    @abstractmethod
    def imported_keys(self, keys: list[str]) -> set[str]:
        """The keys among ``keys`` whose writes committed (idempotency keys of bulk imports)."""

    @abstractmethod
    def idempotent_outcome(self, key: str) -> str | None:
        """The ``idempotency_outcome`` written with the committed write of ``key`` (``add(...,
        idempotency_key=...)``; ingest/idempotency.py), or None when no write of that key committed."""

    # -- conversation log and rolling summary ---------------------------------------------------
    # ``write`` appends GraphWrite.messages to the scope's log in the same transaction, giving them
    # seq = last_seq + 1, + 2, ... (assigned atomically by the store: concurrent adds never share a
    # seq), then drops the scope's messages beyond the newest ``keep_messages``. In Neo4j the log is
    # (:Conversation {scope, last_seq, summary, summary_through, summary_updated_at})
    # -[:HAS_MESSAGE]->(:Message {scope, seq, add_id, role, content, timestamp}).

    @abstractmethod
    def conversation(self, scope: Scope, limit: int) -> Conversation:
        """The newest ``limit`` messages (oldest first), the summary and its counters; one round trip."""

    @abstractmethod
    def set_summary(self, scope: Scope, text: str, through_seq: int, at: datetime) -> bool:
        """Store the scope's summary if ``through_seq`` is newer than the stored one's (a late,
        slower summary never overwrites a newer one); True when stored. One round trip."""

    @abstractmethod
    def get_all(
        self, scope: Scope, include_invalidated: bool = False, limit: int | None = None, filters: Filter | None = None
    ) -> list[Relation]:
        """Relations of the scope, oldest first: those ``relation_visible`` now (as_of = known_at =
        None), or every version with include_invalidated; ``filters`` applied before the limit."""

    @abstractmethod
    def entities(self, scope: Scope) -> list[Entity]:
        """All entities of the scope, oldest first (without embeddings)."""

    @abstractmethod
    def delete_all(self, scope: Scope) -> int:
        """Remove every entity, relation, memory and logged message (and the summary) of the scope;
        returns the number of entities removed."""

    def scope_lock(self, scope: Scope) -> AbstractContextManager[None]:
        """Held by an add from its first read of the scope to its write, so adds to one scope never
        interleave their read-decide-write (each would miss the other's facts). This default
        serialises the threads of this process; a store shared by processes (Neo4j) also takes a
        database lock."""
        return locks_of(self).hold(scope.key)

    @contextmanager
    def locked_conversation(self, scope: Scope, limit: int | None) -> Iterator[Conversation]:
        """``scope_lock``, and under it the scope's ``conversation`` (the newest ``limit`` messages;
        none read when ``limit`` is None). One round trip on a database store (Neo4j overrides this)."""
        with self.scope_lock(scope):
            yield Conversation() if limit is None else self.conversation(scope, limit)

    @abstractmethod
    def reset(self) -> None:
        """Remove everything graphmem stored (all scopes)."""

    def ping(self) -> None:  # noqa: B027 - an optional hook: a store in this process has nothing to reach
        """Check now, with one quick request and no retries, that the store answers; raise
        StoreUnavailableError when it does not (servers' /health). A store in this process answers."""

    def close(self) -> None:  # noqa: B027 - an optional hook: a store without resources has nothing to release
        """Release connections and files."""

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
