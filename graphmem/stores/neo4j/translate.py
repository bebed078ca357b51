"""The Neo4j store's error boundary: driver and server exceptions become graphmem errors here, with
a short reason and never a password."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from neo4j.exceptions import (
    AuthError,
    DatabaseUnavailable,
    DriverError,
    IncompleteCommit,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)

from graphmem.errors import GraphMemError, StoreError, StoreUnavailableError, WriteOutcomeUnknown
from graphmem.errors.redact import redact_text, redact_url  # one rule for every URL graphmem shows

_UNAVAILABLE = (ServiceUnavailable, SessionExpired, AuthError, DatabaseUnavailable)


def reason(exc: BaseException, url: str | None = None) -> str:
    """A short, single-line reason; server errors carry theirs in ``message``."""
    text = (exc.message if isinstance(exc, Neo4jError) else None) or str(exc) or type(exc).__name__
    text = " ".join(str(text).split())
    if url and url != redact_url(url):
        text = text.replace(url, redact_url(url))
    text = redact_text(text)
    return text if len(text) <= 300 else text[:297] + "..."


@contextmanager
def translated(url: str, *, writing: bool = True) -> Iterator[None]:
    """Raise graphmem's errors (``from`` the driver's) for whatever the block raises; ``writing``
    False: a read, whose lost COMMIT answer is only an unreachable store."""
    try:
        yield
    except GraphMemError:
        raise
    except IncompleteCommit as exc:  # COMMIT was sent, its answer lost: the write may have happened
        if not writing:
            raise StoreUnavailableError(f"Neo4j is unreachable at {redact_url(url)}: {reason(exc, url)}") from exc
        raise WriteOutcomeUnknown(
            f"the connection to Neo4j at {redact_url(url)} failed while a write was committing: {reason(exc, url)}"
        ) from exc
    except _UNAVAILABLE as exc:
        raise StoreUnavailableError(f"Neo4j is unreachable at {redact_url(url)}: {reason(exc, url)}") from exc
    except (Neo4jError, DriverError) as exc:
        code = getattr(exc, "code", None)
        prefix = f"{code}: " if code else ""
        raise StoreError(f"Neo4j query failed: {prefix}{reason(exc, url)}") from exc
    except OSError as exc:
        raise StoreUnavailableError(f"Neo4j is unreachable at {redact_url(url)}: {reason(exc, url)}") from exc

__all__ = ["reason", "redact_url", "translated"]
