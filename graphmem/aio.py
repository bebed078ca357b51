"""``AsyncMemory``: the one engine (``Memory``) behind a thread pool, for asyncio programs.

Nothing here re-implements a pipeline. Every public method of ``Memory`` becomes a coroutine of the
same name, arguments and result, generated from ``Memory`` itself when this module is imported, so a
method added to ``Memory`` is on ``AsyncMemory`` without an edit here. Calls run on worker threads;
adds to one scope queue on the store's scope lock (see stores/locks.py) while adds to different
scopes run in parallel, up to ``max_workers`` calls at a time.

    async with AsyncMemory.from_config({...}) as memory:
        await memory.add("I moved to Denver", user_id="alice")
        found = await memory.search("where do I live?", user_id="alice")
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, Concatenate, ParamSpec, TypeVar

from graphmem.config import MemoryConfig
from graphmem.memory import Memory

__all__ = ["AsyncMemory", "public_methods"]

#: Memory members that are not wrapped one to one: constructors and the sync context protocol.
_NOT_WRAPPED = frozenset({"from_config"})

_P = ParamSpec("_P")
_R = TypeVar("_R")

if TYPE_CHECKING:

    def _mirror(
        method: Callable[Concatenate[Memory, _P], _R],
    ) -> Callable[Concatenate[AsyncMemory, _P], Coroutine[Any, Any, _R]]:
        """For type checkers only: the coroutine generated below has the method's arguments and result."""


def public_methods(cls: type) -> list[str]:
    """Names of the public instance methods of ``cls`` (its own and inherited, no dunders)."""
    names = []
    for name, member in inspect.getmembers(cls):
        if name.startswith("_") or name in _NOT_WRAPPED:
            continue
        raw = inspect.getattr_static(cls, name)
        if isinstance(raw, (classmethod, staticmethod, property)):
            continue
        if inspect.isfunction(member):
            names.append(name)
    return sorted(names)


class AsyncMemory:
    """``Memory`` for asyncio: the same methods as coroutines, run on a thread pool.

    Build it like ``Memory`` (``AsyncMemory(config, llm=..., embedder=..., store=...)`` or
    ``AsyncMemory.from_config({...})``), or wrap an existing one with ``AsyncMemory(memory=m)``.
    The wrapped engine is ``.sync``. ``async with`` closes it (and the pool) at the end.
    """

    def __init__(
        self,
        config: MemoryConfig | dict[str, Any] | None = None,
        *,
        memory: Memory | None = None,
        max_workers: int = 8,
        **parts: Any,
    ) -> None:
        self.sync = memory if memory is not None else Memory(config, **parts)
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="graphmem-async")

    @classmethod
    def from_config(cls, config_dict: dict[str, Any], **kwargs: Any) -> AsyncMemory:
        return cls(MemoryConfig.load(config_dict), **kwargs)

    def __repr__(self) -> str:
        return f"AsyncMemory({self.sync!r})"

    async def _call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        loop = asyncio.get_running_loop()
        # with the caller's context: a span the caller is in (a server request's) is the parent of the call's
        call = functools.partial(getattr(self.sync, name), *args, **kwargs)
        return await loop.run_in_executor(self._pool, contextvars.copy_context().run, call)

    async def __aenter__(self) -> AsyncMemory:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()  # generated below

    if TYPE_CHECKING:  # the coroutines generated below, typed from Memory's own signatures

        add = _mirror(Memory.add)
        add_many = _mirror(Memory.add_many)
        close = _mirror(Memory.close)
        delete = _mirror(Memory.delete)
        delete_all = _mirror(Memory.delete_all)
        flush = _mirror(Memory.flush)
        forget = _mirror(Memory.forget)
        forget_entity = _mirror(Memory.forget_entity)
        get = _mirror(Memory.get)
        get_all = _mirror(Memory.get_all)
        get_summary = _mirror(Memory.get_summary)
        history = _mirror(Memory.history)
        provenance = _mirror(Memory.provenance)
        purge_expired = _mirror(Memory.purge_expired)
        reset = _mirror(Memory.reset)
        search = _mirror(Memory.search)
        summarize = _mirror(Memory.summarize)
        timeline = _mirror(Memory.timeline)
        update = _mirror(Memory.update)
        usage = _mirror(Memory.usage)

        def __getattr__(self, name: str) -> Callable[..., Awaitable[Any]]: ...  # a method added to Memory later


def _coroutine(name: str, method: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    @functools.wraps(method)
    async def call(self: AsyncMemory, *args: Any, **kwargs: Any) -> Any:
        return await self._call(name, *args, **kwargs)

    return call


def _close(method: Callable[..., Any]) -> Callable[..., Awaitable[None]]:
    @functools.wraps(method)
    async def close(self: AsyncMemory, *args: Any, **kwargs: Any) -> None:
        try:
            await self._call("close", *args, **kwargs)
        finally:
            self._pool.shutdown(wait=False)

    return close


for _name in public_methods(Memory):
    _method = getattr(Memory, _name)
    setattr(AsyncMemory, _name, _close(_method) if _name == "close" else _coroutine(_name, _method))
