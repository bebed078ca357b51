"""LangGraph long-term memory on graphmem (``pip install 'graphmem[langgraph]'``).

Two ways in, both over the one engine (``Memory`` or ``AsyncMemory``):

- graph nodes: ``recall_node`` puts the memories and relations relevant to the newest user message
  into the state (``"memories"``), ``remember_node`` adds the turn's messages to graphmem. The scope
  comes from the run's config: ``config={"configurable": {"user_id": "alice"}}`` (agent_id / run_id
  too);
- tools a tool-calling agent decides to use: ``memory_tools(memory, user_id=...)`` returns LangChain
  tools ``search_memory`` and ``add_memory`` bound to one scope (a ToolNode runs them).

See examples/langgraph_memory.py.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool

from graphmem.aio import AsyncMemory
from graphmem.errors import MissingScopeError
from graphmem.memory import Memory

SCOPE_KEYS = ("user_id", "agent_id", "run_id")
ROLES = {"human": "user", "user": "user", "ai": "assistant", "assistant": "assistant"}
State = dict[str, Any]


def scope_of(config: RunnableConfig | None) -> dict[str, Any]:
    """The graphmem scope named in the run's ``configurable`` (at least one id)."""
    configurable = (config or {}).get("configurable") or {}
    scope = {k: str(configurable[k]) for k in SCOPE_KEYS if configurable.get(k) is not None}
    if not scope:
        raise MissingScopeError("pass the scope in the run config: {'configurable': {'user_id': ...}}")
    return scope


def to_messages(messages: list[Any]) -> list[dict[str, str]]:
    """LangChain messages (or dicts) as graphmem's {role, content}; tool and system messages are skipped."""
    out = []
    for m in messages:
        role, content = (m.type, m.content) if isinstance(m, BaseMessage) else (m.get("role"), m.get("content"))
        if role in ROLES and isinstance(content, str) and content.strip():
            out.append({"role": ROLES[role], "content": content})
    return out


def _last_user_text(state: State) -> str:
    users = [m["content"] for m in to_messages(state.get("messages", [])) if m["role"] == "user"]
    return users[-1] if users else ""


def recall_node(memory: Memory | AsyncMemory, *, limit: int = 5) -> Callable[..., Any]:
    """A node returning {"memories": search result} for the newest user message."""
    if isinstance(memory, AsyncMemory):

        async def arecall(state: State, config: RunnableConfig) -> State:
            return {"memories": await memory.search(_last_user_text(state), **scope_of(config), limit=limit)}

        return arecall

    def recall(state: State, config: RunnableConfig) -> State:
        return {"memories": memory.search(_last_user_text(state), **scope_of(config), limit=limit)}

    return recall


def remember_node(memory: Memory | AsyncMemory, *, last: int = 2) -> Callable[..., Any]:
    """A node adding the turn's newest ``last`` user/assistant messages to graphmem; returns nothing."""
    if isinstance(memory, AsyncMemory):

        async def aremember(state: State, config: RunnableConfig) -> State:
            turn = to_messages(state.get("messages", []))[-last:]
            if turn:
                await memory.add(turn, **scope_of(config))
            return {}

        return aremember

    def remember(state: State, config: RunnableConfig) -> State:
        turn = to_messages(state.get("messages", []))[-last:]
        if turn:
            memory.add(turn, **scope_of(config))
        return {}

    return remember


def memory_tools(memory: Memory, *, user_id: str | None = None, agent_id: str | None = None,
                 run_id: str | None = None) -> list[BaseTool]:
    """``search_memory`` and ``add_memory`` as LangChain tools bound to one scope."""
    if user_id is None and agent_id is None and run_id is None:
        raise MissingScopeError("memory_tools needs user_id, agent_id or run_id")

    def search_memory(query: str, limit: int = 5) -> dict[str, Any]:
        """Search long-term memory (facts and knowledge-graph relations about the user) for a query."""
        return dict(memory.search(query, user_id=user_id, agent_id=agent_id, run_id=run_id, limit=limit))

    def add_memory(text: str) -> dict[str, Any]:
        """Remember something the user said (graphmem extracts facts and relations from it)."""
        return memory.add(text, user_id=user_id, agent_id=agent_id, run_id=run_id)

    tools: list[Callable[..., Any] | Callable[..., Awaitable[Any]]] = [search_memory, add_memory]
    return [StructuredTool.from_function(fn) for fn in tools]
