"""Token usage per add and per Memory, from the servers' own counts.

An add runs its stages on several threads and many adds share one client, so the client's totals
cannot say what one add cost. Each add opens a :func:`metered` block; the client records every answered
request into the meter of the block it runs in (a context variable, carried into the add's worker
threads by ``contextvars.copy_context``).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypedDict

if TYPE_CHECKING:
    from graphmem.llm.base import LLMUsage


class StageUsage(TypedDict):
    llm_requests: int
    prompt_tokens: int
    completion_tokens: int


class Usage(TypedDict, total=False):
    """``add()``'s ``usage`` and :meth:`Memory.usage`'s answer."""

    llm_requests: int
    prompt_tokens: int
    completion_tokens: int
    embedding_requests: int
    refused_requests: int
    by_stage: dict[str, StageUsage]


@dataclass
class UsageMeter:
    """What one add (or any block) asked of the model and the embedder."""

    llm_requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    embedding_requests: int = 0
    by_stage: dict[str, StageUsage] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add_llm(self, stage: str, prompt_tokens: int, completion_tokens: int) -> None:
        with self._lock:
            self.llm_requests += 1
            self.prompt_tokens += prompt_tokens
            self.completion_tokens += completion_tokens
            row = self.by_stage.setdefault(stage, {"llm_requests": 0, "prompt_tokens": 0, "completion_tokens": 0})
            row["llm_requests"] += 1
            row["prompt_tokens"] += prompt_tokens
            row["completion_tokens"] += completion_tokens

    def add_embedding(self) -> None:
        with self._lock:
            self.embedding_requests += 1

    def as_dict(self) -> Usage:
        with self._lock:
            return {
                "llm_requests": self.llm_requests,
                "prompt_tokens": self.prompt_tokens,
                "completion_tokens": self.completion_tokens,
                "embedding_requests": self.embedding_requests,
                "by_stage": {k: v.copy() for k, v in sorted(self.by_stage.items())},
            }


_current: ContextVar[UsageMeter | None] = ContextVar("graphmem_usage_meter", default=None)


@contextmanager
def metered() -> Iterator[UsageMeter]:
    """Count what the code inside the block asks of the model and the embedder."""
    meter = UsageMeter()
    token = _current.set(meter)
    try:
        yield meter
    finally:
        _current.reset(token)


def record_llm(stage: str, prompt_tokens: int, completion_tokens: int) -> None:
    meter = _current.get()
    if meter is not None:
        meter.add_llm(stage, prompt_tokens, completion_tokens)


def record_embedding() -> None:
    meter = _current.get()
    if meter is not None:
        meter.add_embedding()


def totals(llm_usages: Iterable[LLMUsage], embedding_requests: int) -> Usage:
    """The totals of several clients' counters (a Memory may have a separate graph LLM)."""
    out: Usage = {"llm_requests": 0, "prompt_tokens": 0, "completion_tokens": 0, "embedding_requests": embedding_requests,
                  "refused_requests": 0, "by_stage": {}}
    by_stage = out["by_stage"]
    for usage in llm_usages:
        out["llm_requests"] += usage.calls
        out["prompt_tokens"] += usage.prompt_tokens
        out["completion_tokens"] += usage.completion_tokens
        out["refused_requests"] += usage.refused
        for stage, row in usage.per_stage.items():
            mine = by_stage.setdefault(stage, {"llm_requests": 0, "prompt_tokens": 0, "completion_tokens": 0})
            mine["llm_requests"] += row["calls"]
            mine["prompt_tokens"] += row["prompt_tokens"]
            mine["completion_tokens"] += row["completion_tokens"]
    return out




def format_usage(usage: Usage) -> str:
    """A Markdown table of requests and tokens per stage, with the totals (graphmem demo prints it)."""
    lines = ["| stage | requests | prompt tokens | completion tokens |", "|---|---:|---:|---:|"]
    for stage, row in (usage.get("by_stage") or {}).items():
        lines.append(f"| {stage} | {row['llm_requests']} | {row['prompt_tokens']} | {row['completion_tokens']} |")
    lines.append(f"| **total** | {usage.get('llm_requests', 0)} | {usage.get('prompt_tokens', 0)} | {usage.get('completion_tokens', 0)} |")
    return "\n".join(lines)
