"""Plain data shared by the pipeline, the stores and the retriever.

Names follow one rule: a *canonical* name is the key graphmem matches entities on, the *name* is
what the user first said. Times are timezone-aware UTC datetimes inside the library and ISO-8601
strings at the public API.
"""

from __future__ import annotations

import json
import re
import unicodedata
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from graphmem.errors import InvalidInputError, LimitExceededError, MissingScopeError
from graphmem.results import MemoryEvent, MemoryResult, RelationResult

#: Entity names longer than this are cut (documented rule: a 10k-character "name" is not a name).
MAX_NAME_CHARS = 200
#: Relationship types longer than this are cut after sanitising.
MAX_REL_TYPE_CHARS = 64
#: Scope ids longer than this are refused (graphmem.schema.limits.SCOPE_ID_CHARS, one of the input limits).
MAX_SCOPE_ID_CHARS = 256
FALLBACK_REL_TYPE = "RELATED_TO"

_SPACE = re.compile(r"\s+")


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def new_id() -> str:
    return str(uuid.uuid4())


def iso(value: datetime | None) -> str | None:
    """ISO-8601 UTC with a trailing Z, or None."""
    if value is None:
        return None
    return value.astimezone(timezone.utc).isoformat().replace("+00:00", "Z")


def parse_time(value: datetime | str | None, *, field_name: str = "timestamp") -> datetime | None:
    """Accept a datetime or an ISO-8601 string; naive values are taken as UTC.

    Raises InvalidInputError for anything else, so a caller's bad timestamp fails before any work.
    """
    if value is None:
        return None
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):
            text = text[:-1] + "+00:00"
        try:
            dt = datetime.fromisoformat(text)
        except ValueError as exc:
            raise InvalidInputError(f"{field_name} is not ISO-8601: {value!r}") from exc
    else:
        raise InvalidInputError(f"{field_name} must be a datetime or an ISO-8601 string, got {type(value).__name__}")
    try:
        return to_utc(dt)
    except OverflowError as exc:
        raise InvalidInputError(f"{field_name} {value!r} is outside the years 1-9999 once taken to UTC") from exc


def to_utc(dt: datetime) -> datetime:
    """Aware UTC; naive values are taken as UTC. OverflowError when UTC leaves years 1-9999
    (``0001-01-01T00:00:00+01:00`` is still year 0 in UTC)."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc)


def clean_text(text: str) -> str:
    """NFC-normalise, drop control characters (keeping newlines and tabs), trim."""
    if text.isascii() and text.isprintable():  # the common case, already clean (a bulk import's hot path)
        return text.strip()
    text = unicodedata.normalize("NFC", text)
    text = "".join(ch for ch in text if ch in "\n\t" or unicodedata.category(ch)[0] != "C")
    return text.strip()


def display_name(name: str) -> str:
    """The stored name of an entity: cleaned, single-spaced, at most MAX_NAME_CHARS characters."""
    return _SPACE.sub(" ", clean_text(name).replace("_", " "))[:MAX_NAME_CHARS].strip()


def canonical_name(name: str) -> str:
    """The matching key of an entity name: NFKC, case-folded, underscores and runs of spaces as one space."""
    text = unicodedata.normalize("NFKC", display_name(name)).casefold()
    return _SPACE.sub(" ", text).strip()


def sanitize_relation_type(text: str) -> str:
    """Upper snake case made only of letters, digits and underscores (any script).

    Backticks, quotes, brackets, emoji and Cypher fragments cannot survive this: every character that
    is not a letter or a digit becomes an underscore. The stores still pass the type as a query
    parameter; this keeps the type readable as an arrow caption in Neo4j Browser.
    """
    text = unicodedata.normalize("NFKC", str(text)).upper()
    out = "".join(ch if ch.isalnum() and ch.isprintable() else "_" for ch in text)
    out = re.sub(r"_+", "_", out).strip("_")[:MAX_REL_TYPE_CHARS].strip("_")
    if not out:
        return FALLBACK_REL_TYPE
    if out[0].isdigit():
        out = "R_" + out
    return out


#: Unicode categories a scope id may not contain: control, format (zero-width, soft hyphen, BOM,
#: bidi marks), surrogate. They are invisible or unstorable, so two ids that differ only by them would
#: look alike; they are refused rather than removed, because a scope id is never rewritten.
_REFUSED_ID_CATEGORIES = frozenset({"Cc", "Cf", "Cs"})


def check_scope_id(arg: str, value: Any) -> str | None:
    """A scope id exactly as given, or InvalidInputError (README: Scope).

    Ids are security boundaries, so they are matched exactly: no normalisation (an NFC and an NFD
    spelling are two scopes), no trimming, no character removed. What graphmem will not store is
    refused: an empty id, one longer than MAX_SCOPE_ID_CHARS, surrounding whitespace, and control,
    format or surrogate characters anywhere.
    """
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidInputError(f"{arg} must be a string, got {type(value).__name__}")
    if not value:
        raise InvalidInputError(f"{arg} is empty")
    if len(value) > MAX_SCOPE_ID_CHARS:
        raise LimitExceededError(f"{arg} is longer than {MAX_SCOPE_ID_CHARS} characters ({len(value):,}); the limit is {MAX_SCOPE_ID_CHARS}")
    if value != value.strip():
        raise InvalidInputError(f"{arg} {value!r} has surrounding whitespace; ids are used exactly as given")
    for ch in value:
        if unicodedata.category(ch) in _REFUSED_ID_CATEGORIES:
            raise InvalidInputError(
                f"{arg} {value!r} contains the invisible or control character U+{ord(ch):04X}; ids are used exactly as given"
            )
    return value


@dataclass(frozen=True)
class Owners:
    """Whose memories a read by id may return: these user ids, and user ids starting with one of
    these prefixes (a server's tenant key). Checked in the store's lookup itself, so a memory of
    someone else is never loaded: it costs what an unknown id costs."""

    users: tuple[str, ...] = ()
    prefixes: tuple[str, ...] = ()
    #: also only this agent's / run's (a scope's read by id: see :meth:`of_scope`)
    agent_id: str | None = None
    run_id: str | None = None
    #: any user (or none): the scope named no user_id, so only agent_id / run_id restrict
    any_user: bool = False

    @classmethod
    def of_scope(cls, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> Owners:
        """What a read in this scope may see by id: a memory whose ids match every id the scope names
        (a user read sees the user's runs), so an MCP server's scope is checked where a key's users are."""
        if user_id is None and agent_id is None and run_id is None:
            raise MissingScopeError("one of user_id, agent_id or run_id is required")
        return cls(users=() if user_id is None else (user_id,), agent_id=agent_id, run_id=run_id, any_user=user_id is None)

    def allow(self, user_id: str | None) -> bool:
        """Whether the user part admits ``user_id`` (agent and run are :meth:`admits`' too)."""
        if self.any_user:
            return True
        return user_id is not None and (user_id in self.users or any(user_id.startswith(p) for p in self.prefixes))

    def admits(self, owner: Mapping[str, Any]) -> bool:
        """Whether a record with these ``user_id`` / ``agent_id`` / ``run_id`` is one of these owners'."""
        return (self.allow(owner.get("user_id")) and (self.agent_id is None or owner.get("agent_id") == self.agent_id)
                and (self.run_id is None or owner.get("run_id") == self.run_id))

    def parameters(self) -> dict[str, Any]:
        """The rule as a query parameter (cypher/get_memory.cypher)."""
        return {"users": list(self.users), "prefixes": list(self.prefixes), "agent_id": self.agent_id,
                "run_id": self.run_id, "any_user": self.any_user}


@dataclass(frozen=True)
class Scope:
    """Who a memory belongs to: the combination of user, agent and run ids (at least one is set)."""

    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None

    @classmethod
    def of(cls, user_id: Any = None, agent_id: Any = None, run_id: Any = None) -> Scope:
        values: dict[str, str | None] = {
            "user_id": check_scope_id("user_id", user_id),
            "agent_id": check_scope_id("agent_id", agent_id),
            "run_id": check_scope_id("run_id", run_id),
        }
        if not any(values.values()):
            raise MissingScopeError("one of user_id, agent_id or run_id is required")
        return cls(**values)

    @property
    def key(self) -> str:
        """The partition the scope reads and writes in, stored as ``scope`` on every node and relation:
        its user (whatever agent and run), else its agent (without a user), else its run. So "I" is
        one node per user, and a user read sees the user's runs and agents; reads never cross users."""
        if self.user_id is not None:
            owner = [self.user_id, None, None]
        elif self.agent_id is not None:
            owner = [None, self.agent_id, None]
        else:
            owner = [None, None, self.run_id]
        return json.dumps(owner, ensure_ascii=False, separators=(",", ":"))

    @property
    def full_key(self) -> str:
        """Every id the scope names, exactly: relations keep it as ``ids`` (one current instance of a
        relation per exact scope)."""
        return json.dumps([self.user_id, self.agent_id, self.run_id], ensure_ascii=False, separators=(",", ":"))

    @property
    def narrowing(self) -> dict[str, str]:
        """The ids a read names beyond its partition's owner: it sees only records written with them."""
        below = ("agent_id", "run_id") if self.user_id is not None else ("run_id",) if self.agent_id is not None else ()
        return {k: v for k in below if (v := getattr(self, k)) is not None}

    @property
    def self_name(self) -> str:
        """The entity that "I", "me" and "my" resolve to."""
        return self.user_id or self.agent_id or self.run_id or ""

    def properties(self) -> dict[str, str | None]:
        return {"user_id": self.user_id, "agent_id": self.agent_id, "run_id": self.run_id}


@dataclass
class Entity:
    """An entity node as stored."""

    id: str
    name: str
    canonical: str
    entity_type: str
    mentions: int = 1
    created_at: datetime | None = None
    updated_at: datetime | None = None
    embedding: list[float] | None = None
    score: float | None = None  # similarity when returned by a match
    attributes: dict[str, Any] = field(default_factory=dict)  # ontology attributes (graphmem.schema.ontology)

    def to_dict(self) -> dict[str, Any]:
        out = {
            "id": self.id,
            "name": self.name,
            "entity_type": self.entity_type,
            "mentions": self.mentions,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
        }
        if self.attributes:
            out["attributes"] = dict(self.attributes)
        return out


@dataclass
class Relation:
    """A relation instance between two entities with both time axes."""

    id: str
    source_id: str
    source: str
    relationship: str
    destination_id: str
    destination: str
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    created_at: datetime | None = None
    expired_at: datetime | None = None
    mentions: int = 1
    provenance: list[str] = field(default_factory=list)
    score: float | None = None
    scores: dict[str, float] = field(default_factory=dict)
    source_type: str | None = None  # entity types and ontology attributes of the endpoints
    destination_type: str | None = None
    source_attributes: dict[str, Any] = field(default_factory=dict)
    destination_attributes: dict[str, Any] = field(default_factory=dict)
    hops: int = 1  # search(hops=2): how far from a seed entity the relation was found
    path: list[dict[str, str]] | None = None  # the steps from the seed ({source, relationship, destination}) when hops > 1
    #: the triple in words (graphmem.schema.facts); None for a version written before facts (graphmem reindex)
    fact: str | None = None
    retired_by: str | None = None  # the add that retired this version (provenance), None while current

    @property
    def is_current(self) -> bool:
        return self.invalid_at is None and self.expired_at is None

    def to_dict(self) -> RelationResult:
        out: RelationResult = {
            "id": self.id,
            "source": self.source,
            "relationship": self.relationship,
            "destination": self.destination,
            "valid_at": iso(self.valid_at),
            "invalid_at": iso(self.invalid_at),
            "created_at": iso(self.created_at),
            "expired_at": iso(self.expired_at),
            "mentions": self.mentions,
        }
        if self.fact is not None:
            out["fact"] = self.fact
        if self.provenance or self.retired_by:
            out["provenance"] = {"added_by": list(self.provenance), "retired_by": self.retired_by}
        if self.score is not None:
            out["score"] = round(self.score, 6)
        if self.scores:
            out["scores"] = {k: round(v, 6) for k, v in self.scores.items()}
        self._endpoint_details(out)
        if self.path:
            out["hops"], out["path"] = self.hops, self.path
        return out

    def _endpoint_details(self, out: RelationResult) -> None:
        if self.source_type is not None:
            out["source_type"] = self.source_type
        if self.destination_type is not None:
            out["destination_type"] = self.destination_type
        if self.source_attributes:
            out["source_attributes"] = dict(self.source_attributes)
        if self.destination_attributes:
            out["destination_attributes"] = dict(self.destination_attributes)


@dataclass(frozen=True)
class TimeSpan:
    """A time expression of a text resolved against when it was said: "last Saturday" said on
    2023-05-08 is [2023-05-06, 2023-05-07). ``end`` is exclusive; ``period`` is day, week, month or year."""

    text: str
    start: datetime
    end: datetime
    period: str = "day"

    def to_dict(self) -> dict[str, str | None]:
        return {"text": self.text, "start": iso(self.start), "end": iso(self.end), "period": self.period}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TimeSpan:
        start, end = parse_time(data["start"]), parse_time(data["end"])
        assert start is not None and end is not None
        return cls(str(data["text"]), start, end, str(data.get("period") or "day"))


def time_words(spans: list[TimeSpan] | tuple[TimeSpan, ...]) -> str:
    """The resolved dates as words a BM25 index can match: "6 May 2023 Saturday", "November 2022", "2019"."""
    words = []
    for s in spans:
        if s.period == "year":
            words.append(f"{s.start:%Y}")
        elif s.period in ("month", "week"):
            last = s.end - timedelta(days=1)
            words.append(f"{s.start:%B %Y}" if last.month == s.start.month else f"{s.start:%B} {last:%B %Y}")
        else:
            words.append(f"{s.start.day} {s.start:%B %Y %A}")
    return " ".join(words)


def turn_key(said_at: datetime, at: datetime, position: int) -> str:
    """The order of a message among its scope's messages: when it was said, then when it was stored,
    then its place in the add. A sortable string, so both stores can range-scan it."""
    said, stored = said_at.astimezone(timezone.utc), at.astimezone(timezone.utc)
    return f"{said:%Y%m%dT%H%M%S.%f}|{stored:%Y%m%dT%H%M%S.%f}|{position:06d}"


@dataclass
class MemoryItem:
    """A short memory fact (the vector memory), soft-deleted by the update stage.

    A memory stored from a message (``add(infer=False)``) has ``said_at`` and a ``turn`` (its place
    in the conversation, see turn_key); ``times`` holds the time expressions of its text, resolved.
    ``context`` holds neighbouring messages when a search preset returns them as context."""

    id: str
    text: str
    hash: str
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    role: str | None = None
    created_at: datetime | None = None
    updated_at: datetime | None = None
    deleted_at: datetime | None = None
    embedding: list[float] | None = None
    score: float | None = None
    scores: dict[str, float] = field(default_factory=dict)
    expires_at: datetime | None = None  # retention
    said_at: datetime | None = None
    turn: str | None = None
    times: list[TimeSpan] = field(default_factory=list)
    context: list[dict[str, Any]] | None = None
    valid_at: datetime | None = None  # event time: when it was said (the add's timestamp)
    invalid_at: datetime | None = None  # event time it stopped being true (retired by the update stage)
    mentions: list[str] = field(default_factory=list)  # ids of the entities it MENTIONS (when read for the pipeline)
    #: search only (retrieval.agreement): {"relations": [ids of relations it states that are current],
    #: "superseded": {"relation", "by", "fact"} when what it states was retired for a newer relation}
    graph: dict[str, Any] | None = None

    def to_dict(self) -> MemoryResult:
        """mem0's shape: id, memory, hash, metadata, created_at, updated_at and the scope keys; plus
        said_at / times when known, context when a preset attached neighbouring messages, and the
        event time (valid_at, and invalid_at once retired)."""
        out: MemoryResult = {
            "id": self.id,
            "memory": self.text,
            "hash": self.hash,
            "metadata": self.metadata,
            "created_at": iso(self.created_at),
            "updated_at": iso(self.updated_at),
        }
        for key, value in (("user_id", self.user_id), ("agent_id", self.agent_id), ("run_id", self.run_id), ("role", self.role)):
            if value is not None:
                out[key] = value  # type: ignore[literal-required]  # key is one of the optional keys, not a Literal to mypy
        if self.valid_at is not None:
            out["valid_at"] = iso(self.valid_at) or ""
        if self.invalid_at is not None:
            out["invalid_at"] = iso(self.invalid_at) or ""
        if self.deleted_at is not None:
            out["deleted_at"] = iso(self.deleted_at) or ""
        if self.score is not None:
            out["score"] = round(self.score, 6)
        if self.scores:
            out["scores"] = {k: round(v, 6) for k, v in self.scores.items()}
        if self.said_at is not None:
            out["said_at"] = iso(self.said_at) or ""
        if self.times:
            out["times"] = [t.to_dict() for t in self.times]
        if self.context is not None:
            out["context"] = self.context
        if self.graph:
            out["graph"] = self.graph
        return out


def text_hash(text: str) -> str:
    import hashlib

    return hashlib.md5(text.encode("utf-8")).hexdigest()  # mem0's hash: identifies text, not security


# --- what one add writes, in one transaction -------------------------------------------------


@dataclass
class EntityWrite:
    """Create the entity (new id) or touch an existing one (mentions + 1, updated_at)."""

    id: str
    name: str
    canonical: str
    entity_type: str
    embedding: list[float]
    is_new: bool
    attributes: dict[str, Any] = field(default_factory=dict)  # validated ontology attributes to set
    label: str | None = None  # display label of an ontology type (validated name), else the style's


@dataclass
class RelationWrite:
    """Assert a relation: bump the current instance of (source, type, destination) or create one."""

    source_id: str
    relationship: str
    destination_id: str
    valid_at: datetime
    invalid_at: datetime | None = None
    #: the id a new instance gets (chosen here, so add() can report it without reading it back)
    id: str = field(default_factory=new_id)
    #: a version restored from an export (graphmem load) keeps its transaction times: ``created_at``
    #: (None: the write's time) and ``expired_at``. A version with ``expired_at`` is history: it is
    #: written as it was, never merged into the current instance of its triple
    created_at: datetime | None = None
    expired_at: datetime | None = None
    #: the fact text (graphmem.schema.facts) and its embedding; None: none (a store keeps what a bumped
    #: current instance has, and ``graphmem reindex`` fills what is missing)
    fact: str | None = None
    fact_embedding: list[float] | None = None
    #: a restored version's provenance: the adds that asserted it and the one that retired it (graphmem
    #: load); empty: this write's add
    provenance: list[str] = field(default_factory=list)
    retired_by: str | None = None


@dataclass
class Invalidation:
    """Retire a current relation: invalid_at in event time, expired_at = the add's time."""

    relation_id: str
    invalid_at: datetime


@dataclass
class MemoryWrite:
    """ADD creates a memory; UPDATE replaces text, hash, embedding (and metadata when given) in place;
    DELETE soft-deletes it (deleted_at = the add's time). ``valid_at`` (ADD, UPDATE: when the text
    became true, the add's timestamp; None on UPDATE keeps it) and ``invalid_at`` (DELETE: when it
    stopped) are event time, as on relations; None on ADD means the write's time."""

    event: MemoryEvent
    id: str
    text: str = ""
    embedding: list[float] | None = None
    metadata: dict[str, Any] | None = None
    role: str | None = None
    entity_ids: list[str] = field(default_factory=list)  # entities the memory mentions (ADD / UPDATE)
    expires_at: datetime | None = None  # retention (ADD only): invisible from then on, purged later
    #: when the message was said; set for a memory stored from a message, whose place in the
    #: conversation (``turn``) the store derives from it (turn_key with the write's time)
    said_at: datetime | None = None
    position: int = 0  # the message's place in its add
    #: resolved time expressions of the text (retrieval.when); None: not computed, keep what is stored
    times: list[TimeSpan] | None = None
    valid_at: datetime | None = None
    invalid_at: datetime | None = None
    #: ADD of a memory restored from an export (graphmem load): when it was first stored (None: the
    #: write's time), so known_at reads answer on the copy as on the original
    created_at: datetime | None = None

    @property
    def hash(self) -> str:
        return text_hash(self.text)


@dataclass
class LoggedMessage:
    """One message of a scope's conversation log. ``seq`` is assigned by the store on write."""

    role: str
    content: str
    timestamp: datetime  # when it was said (the add's reference time)
    add_id: str = ""
    seq: int = 0
    expires_at: datetime | None = None  # retention: invisible from then on, purged later


@dataclass
class Conversation:
    """A scope's recent conversation and rolling summary, as read in one round trip."""

    messages: list[LoggedMessage] = field(default_factory=list)  # the newest ``limit``, oldest first
    summary: str | None = None
    summary_through: int = 0  # seq of the newest message the summary covers
    summary_updated_at: datetime | None = None
    last_seq: int = 0
    adds_since_summary: int = 0  # distinct add ids among messages with seq > summary_through


@dataclass
class GraphWrite:
    add_id: str
    scope: Scope
    at: datetime  # transaction time of the add
    entities: list[EntityWrite] = field(default_factory=list)
    relations: list[RelationWrite] = field(default_factory=list)
    invalidations: list[Invalidation] = field(default_factory=list)
    memories: list[MemoryWrite] = field(default_factory=list)
    messages: list[LoggedMessage] = field(default_factory=list)  # appended to the conversation log
    keep_messages: int = 200  # the log keeps the newest this-many messages of the scope
    idempotency_key: str | None = None  # a bulk import's key: recorded with the add, see Memory.add_many
    #: with idempotency_key, the add's answer (JSON: fingerprint and result) stored in its commit (ingest/idempotency.py)
    idempotency_outcome: str | None = None

    def is_empty(self) -> bool:
        return not (self.entities or self.relations or self.invalidations or self.memories or self.messages or self.idempotency_key)
