"""Conversation context for the extraction stages: the scope's summary and its last m messages,
and the rolling summary kept up to date in the background.

Bounded by construction: at most ``recent_messages`` earlier messages of at most
MAX_CONTEXT_MESSAGE_CHARS each, plus a summary of at most MAX_SUMMARY_CHARS, whatever the length
of the conversation.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor

from graphmem.stages.conversation import Message
from graphmem.stages.summary import SummaryStage
from graphmem.stores.base import GraphStore
from graphmem.types import Conversation, Scope, utcnow

log = logging.getLogger(__name__)

MAX_CONTEXT_MESSAGE_CHARS = 1000


def render_context(conversation: Conversation) -> str:
    """The context section of a stage's user prompt ("" when there is none)."""
    parts = []
    if conversation.summary:
        parts.append(f"Conversation summary (context only):\n{conversation.summary}")
    if conversation.messages:
        lines = "\n".join(f"{m.role}: {m.content[:MAX_CONTEXT_MESSAGE_CHARS]}" for m in conversation.messages)
        parts.append(f"Earlier messages (context only; take nothing from them):\n{lines}")
    return "\n\n".join(parts)


class Summarizer:
    """Regenerates a scope's summary every ``every`` adds, on one background thread.

    Never blocks ``add``. A summary that is due is found from the store's counters
    (adds_since_summary), so one lost to a crash is simply redone after the next add; ``drain``
    (called by Memory.close) finishes the pending ones. Python also finishes queued work of the
    executor at interpreter exit.
    """

    def __init__(self, store: GraphStore, stage: SummaryStage, every: int, keep_messages: int) -> None:
        self.store = store
        self.stage = stage
        self.every = every
        self.keep_messages = keep_messages
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="graphmem-summary")
        self._pending: dict[str, Future[str | None]] = {}
        self._lock = threading.Lock()

    def is_due(self, conversation: Conversation, adds_now: int = 1) -> bool:
        return self.every > 0 and conversation.adds_since_summary + adds_now >= self.every

    def schedule(self, scope: Scope) -> Future[str | None]:
        with self._lock:
            pending = self._pending.get(scope.key)
            if pending is not None and not pending.done():
                return pending
            future = self._pool.submit(self._run_logged, scope)
            self._pending[scope.key] = future
            return future

    def run(self, scope: Scope) -> str | None:
        """Summarise the messages since the last summary now; returns the scope's summary."""
        conversation = self.store.conversation(scope, self.keep_messages)
        fresh = [Message(m.role, m.content) for m in conversation.messages if m.seq > conversation.summary_through]
        if not fresh:
            return conversation.summary
        text = self.stage.run(conversation.summary, fresh, scope.self_name)
        if text is None:
            return conversation.summary
        self.store.set_summary(scope, text, conversation.last_seq, utcnow())
        return text

    def drain(self, timeout: float | None = 60.0) -> None:
        with self._lock:
            pending = list(self._pending.values())
        for future in pending:
            try:
                future.result(timeout=timeout)
            except Exception:  # noqa: BLE001 - already logged by _run_logged
                pass

    def close(self) -> None:
        self.drain()
        self._pool.shutdown(wait=True)

    def _run_logged(self, scope: Scope) -> str | None:
        try:
            return self.run(scope)
        except Exception:
            log.warning("background summary of scope %s failed; it is redone after the next add", scope.key, exc_info=True)
            raise
