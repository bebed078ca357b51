"""graphmem's exceptions. Every error the library raises on purpose derives from GraphMemError.

    GraphMemError
    ├── ConfigError            invalid configuration (unknown provider, missing model folder, ...)
    ├── InvalidInputError      bad arguments from the caller (no scope, unserialisable metadata, ...)
    │   ├── MissingScopeError  none of user_id / agent_id / run_id was given
    │   ├── LimitExceededError input over one of the limits of graphmem.schema.limits
    │   └── IdempotencyConflictError  an idempotency key reused with another request
    ├── NotFoundError          an id that does not exist (also a KeyError and a ValueError, like mem0's)
    ├── LLMError               the LLM could not be used
    │   ├── LLMUnavailableError    transport failure or retries exhausted (429, 5xx, timeouts)
    │   └── LLMResponseError       the answer could not be used (no tool call, invalid arguments)
    ├── EmbeddingError         the embedder failed
    ├── ClosedError            a Memory used after close()
    ├── AccessDeniedError      a server's key may not use the scope a call names (REST 403, MCP tool error)
    └── StoreError             the graph store failed
        ├── StorageFullError   the disk holding the store or the history is full (delete / forget still work)
        └── StoreUnavailableError  the database cannot be reached (message names the URL)
            ├── WriteOutcomeUnknown  the connection died while a write committed: written or not is unknown
            └── LauncherError      the local Neo4j launcher could not build, start or stop Neo4j

Driver, HTTP and SDK exceptions are translated at the boundary with ``raise ... from exc`` so the
original stays available as ``__cause__``. Messages are redacted (graphmem.errors.redact) when made.

Owns the exceptions and the redaction of what graphmem shows (redact.py: messages, logs, reprs).
May import nothing else of graphmem: everything imports it.
"""

from __future__ import annotations

from graphmem.errors.redact import redact_text


class GraphMemError(Exception):
    """Root of every error graphmem raises. Its text never carries a secret: credentials in URLs,
    keys and tokens are masked when the error is made (graphmem.errors.redact), so a message may name the
    URL it failed on whatever the caller logs or sends back."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact_text(a) if isinstance(a, str) else a for a in args))


class ConfigError(GraphMemError):
    """The configuration is invalid or incomplete."""


class InvalidInputError(GraphMemError, ValueError):
    """An argument given to the public API is invalid."""


class MissingScopeError(InvalidInputError):
    """None of user_id, agent_id, run_id was given."""


class LimitExceededError(InvalidInputError):
    """An argument is over one of graphmem's input limits (graphmem.schema.limits: message length,
    metadata depth and size, query length, ...); every door refuses the same input with it."""


class IdempotencyConflictError(InvalidInputError):
    """An idempotency key was used before, in the same scope, for a different request (other
    messages, metadata or options): nothing was written. Use a new key for a new request."""


class NotFoundError(GraphMemError, KeyError, ValueError):
    """The requested id does not exist. Also a ValueError: mem0 raises ValueError for an unknown
    memory id, and code written for mem0 catches that."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class LLMError(GraphMemError):
    """The LLM could not produce a usable answer."""


class LLMUnavailableError(LLMError):
    """The LLM endpoint failed (transport error, rate limit or server error) after bounded retries."""


class LLMResponseError(LLMError):
    """The LLM answered, but not with a usable tool call."""


class EmbeddingError(GraphMemError):
    """The embedder failed."""


class RerankError(GraphMemError):
    """The optional search reranker failed or returned unusable scores."""


class ClosedError(GraphMemError):
    """A Memory (or a part of it) was used after ``close()``."""


class AccessDeniedError(GraphMemError):
    """A server's API key may not use the scope a call names (graphmem.server.access)."""


class StoreError(GraphMemError):
    """The graph store failed."""


class StorageFullError(StoreError):
    """A write failed because the disk holding the embedded store or the history database is full
    (ENOSPC, SQLite's "database or disk is full"). Nothing of the failed change was kept; deleting and
    forgetting still work, so space can be freed through the API."""


class StoreUnavailableError(StoreError):
    """The graph store cannot be reached."""


class WriteOutcomeUnknown(StoreUnavailableError):
    """The store's connection failed while a write was being committed (Neo4j: after COMMIT was
    sent; embedded: the journal could not be restored after an I/O failure), so the write may or
    may not have happened. graphmem does not guess: the history rows of the change are kept aside
    and settled against the store on the next read of a memory's history, on the next retry with
    the same idempotency key, and at the latest on the next start.

    How to check: retry the add with the same ``idempotency_key`` (it returns the first outcome
    when the write happened, and writes it once otherwise), or look up ``memory_ids`` (``get``) or
    ``history``. ``add_id``, ``idempotency_key`` and ``memory_ids`` say which write it was."""

    def __init__(self, message: str, *, add_id: str | None = None, idempotency_key: str | None = None,
                 memory_ids: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.add_id = add_id
        self.idempotency_key = idempotency_key
        self.memory_ids = memory_ids


class LauncherError(StoreUnavailableError):
    """The local Neo4j launcher (graphmem.launcher) could not build, start or stop Neo4j."""


__all__ = [
    "AccessDeniedError",
    "ClosedError",
    "ConfigError",
    "EmbeddingError",
    "GraphMemError",
    "IdempotencyConflictError",
    "InvalidInputError",
    "LLMError",
    "LauncherError",
    "LimitExceededError",
    "LLMResponseError",
    "LLMUnavailableError",
    "MissingScopeError",
    "NotFoundError",
    "StorageFullError",
    "StoreError",
    "StoreUnavailableError",
    "WriteOutcomeUnknown",
]
