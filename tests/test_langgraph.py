"""graphmem as LangGraph long-term memory, with the real langgraph package: the example agent's
recall -> respond -> remember graph (sync and async) and the tools in a ToolNode, scripted LLM."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from conftest import ROOT, TEST_DIMS
from helpers import make_memory
from langchain_core.messages import AIMessage
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode

from graphmem import AsyncMemory
from graphmem.errors import MissingScopeError
from graphmem.integrations.langgraph import memory_tools

sys.path.insert(0, str(ROOT / "examples"))
from langgraph_memory import build  # noqa: E402


@pytest.fixture
def memory(server, tmp_path):
    from graphmem.stores.embedded import EmbeddedStore

    m = make_memory(server, EmbeddedStore(tmp_path / "g", TEST_DIMS), TEST_DIMS, history_db_path=str(tmp_path / "h.db"))
    yield m
    m.close()


def _script(server, fact: str, entities: list[str], relation: tuple[str, str, str]) -> None:
    server.enqueue("extract_facts", {"facts": [fact]})
    server.enqueue("extract_entities", {"entities": [{"entity": e, "entity_type": "thing"} for e in entities]})
    server.enqueue("establish_relationships", {"relations": [dict(zip(("source", "relationship", "destination"), relation, strict=True))]})


def test_example_agent_remembers_across_runs_per_user(memory, server):
    agent = build(memory)
    alice = {"configurable": {"user_id": "alice"}}
    _script(server, "Lives in Lisbon", ["I", "Lisbon"], ("I", "lives_in", "Lisbon"))
    first = agent.invoke({"messages": [{"role": "user", "content": "I moved to Lisbon last year"}]}, alice)
    assert first["messages"][-1].content == "Nice to meet you!"
    second = agent.invoke({"messages": [{"role": "user", "content": "Where do I live? Lisbon?"}]}, alice)
    assert second["messages"][-1].content == "I remember: Lives in Lisbon"
    assert [r["destination"] for r in second["memories"]["relations"]] == ["Lisbon"]
    bob = agent.invoke({"messages": [{"role": "user", "content": "Where do I live? Lisbon?"}]}, {"configurable": {"user_id": "bob"}})
    assert bob["memories"]["results"] == []  # scopes never cross
    with pytest.raises(MissingScopeError):
        agent.invoke({"messages": [{"role": "user", "content": "hi"}]}, {})


def test_async_agent_with_async_memory(memory, server):
    agent = build(AsyncMemory(memory=memory))  # type: ignore[arg-type]  # the nodes accept either engine
    config = {"configurable": {"user_id": "carol"}}
    _script(server, "Plays the cello", ["I", "cello"], ("I", "plays", "cello"))

    async def main() -> str:
        await agent.ainvoke({"messages": [{"role": "user", "content": "I play the cello"}]}, config)
        out = await agent.ainvoke({"messages": [{"role": "user", "content": "what instrument, the cello?"}]}, config)
        return out["messages"][-1].content

    assert asyncio.run(main()) == "I remember: Plays the cello"


def test_memory_tools_in_a_tool_node(memory, server):
    tools = memory_tools(memory, user_id="dave")
    assert {t.name for t in tools} == {"search_memory", "add_memory"} and all(t.description for t in tools)
    graph = StateGraph(MessagesState)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "tools")
    graph.add_edge("tools", END)
    node = graph.compile()
    _script(server, "Likes green tea", ["I", "green tea"], ("I", "likes", "green tea"))
    call = AIMessage(content="", tool_calls=[{"name": "add_memory", "args": {"text": "I like green tea"}, "id": "c1"}])
    added = node.invoke({"messages": [call]})
    assert "Likes green tea" in added["messages"][-1].content
    call = AIMessage(content="", tool_calls=[{"name": "search_memory", "args": {"query": "green tea"}, "id": "c2"}])
    found = node.invoke({"messages": [call]})
    assert "Likes green tea" in found["messages"][-1].content
    assert memory.search("green tea", user_id="dave")["results"][0]["memory"] == "Likes green tea"
    with pytest.raises(MissingScopeError):
        memory_tools(memory)


def test_example_file_is_what_the_readme_points_to():
    assert (Path(ROOT) / "examples" / "langgraph_memory.py").exists()
