"""Bounds on the LLM requests of one Memory: at most ``max_concurrency`` at a time and at most
``requests_per_minute`` started in any 60 seconds (a sliding window). Bulk imports run many adds at
once; these keep them inside a provider's quota (429s that still happen are retried with backoff by
the client, see openai.py)."""

from __future__ import annotations

import collections
import threading
import time

from graphmem.llm.base import LLM, LLMUsage, ToolCallResult, ToolSpec

WINDOW_SECONDS = 60.0


class LimitedLLM(LLM):
    """Wraps an LLM; every request waits for a free slot and for room in the window."""

    def __init__(self, inner: LLM, max_concurrency: int | None = None, requests_per_minute: int | None = None) -> None:
        self.inner = inner
        self.usage: LLMUsage = inner.usage  # the same counters
        self.max_concurrency = max_concurrency
        self.requests_per_minute = requests_per_minute
        self._slots = threading.BoundedSemaphore(max_concurrency) if max_concurrency else None
        self._started: collections.deque[float] = collections.deque()
        self._window_lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LimitedLLM({self.inner!r}, max_concurrency={self.max_concurrency}, requests_per_minute={self.requests_per_minute})"

    def prepare(self) -> None:
        self.inner.prepare()

    def call_tools(self, stage: str, messages: list[dict[str, str]], tools: list[ToolSpec]) -> ToolCallResult:
        if self._slots is None:
            self._wait_for_window()
            return self.inner.call_tools(stage, messages, tools)
        with self._slots:
            self._wait_for_window()
            return self.inner.call_tools(stage, messages, tools)

    def _wait_for_window(self) -> None:
        if not self.requests_per_minute:
            return
        while True:
            with self._window_lock:
                now = time.monotonic()
                while self._started and now - self._started[0] >= WINDOW_SECONDS:
                    self._started.popleft()
                if len(self._started) < self.requests_per_minute:
                    self._started.append(now)
                    return
                wait = WINDOW_SECONDS - (now - self._started[0])
            time.sleep(min(max(wait, 0.01), 1.0))


def limited(llm: LLM, max_concurrency: int | None, requests_per_minute: int | None) -> LLM:
    """``llm`` itself when no limit is set."""
    if not max_concurrency and not requests_per_minute:
        return llm
    return LimitedLLM(llm, max_concurrency, requests_per_minute)
