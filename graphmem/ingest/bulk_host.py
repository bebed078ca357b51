"""What the bulk lanes need of the memory they fill, and the checked item they pass around.

``BulkHost`` names the few parts of :class:`graphmem.memory.Memory` that bulk.py and verbatim.py use,
so the ingest layer depends on that small interface instead of importing the facade that imports it.
``BulkItem`` is one input item after checking; both bulk.py and verbatim.py read it, so it lives here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from graphmem.stages.conversation import Message
from graphmem.types import Scope

if TYPE_CHECKING:
    from graphmem.config import MemoryConfig
    from graphmem.embeddings.base import Embedder
    from graphmem.lifecycle.history import History
    from graphmem.lifecycle.retention import Retention
    from graphmem.stores.base import GraphStore


@dataclass
class BulkItem:
    index: int
    key: str | None
    scope: Scope
    messages: Any
    metadata: dict[str, Any]
    reference_time: datetime
    expiration_date: Any = None
    parsed: list[Message] = field(default_factory=list)


class BulkHost(Protocol):
    """The memory a bulk run writes into (``Memory`` is one)."""

    config: MemoryConfig
    store: GraphStore
    embedder: Embedder
    history_log: History
    _retention: Retention

    def _add_checked(
        self, scope: Scope, messages: Any, metadata: dict[str, Any], reference_time: datetime, infer: bool,
        expiration_date: Any = None, key: str | None = None, prompt: str | None = None,
    ) -> dict[str, Any]: ...
