"""A LangGraph agent with graphmem long-term memory: recall -> respond -> remember.

    pip install 'graphmem[langgraph]'
    python examples/langgraph_memory.py      # offline with the fake model, or OpenAI with OPENAI_API_KEY

``respond`` stands in for your model call: it receives the recalled memories in the state. Each run
names its user in the config, so memories never cross users.
"""

from __future__ import annotations

from typing import Any

from _models import models
from langgraph.graph import END, START, MessagesState, StateGraph

from graphmem import Memory
from graphmem.integrations.langgraph import recall_node, remember_node


class State(MessagesState):
    memories: dict[str, Any]


def respond(state: State) -> dict[str, Any]:
    known = [m["memory"] for m in state["memories"]["results"]]
    reply = f"I remember: {'; '.join(known)}" if known else "Nice to meet you!"
    return {"messages": [{"role": "assistant", "content": reply}]}


def build(memory: Memory) -> Any:
    graph = StateGraph(State)
    graph.add_node("recall", recall_node(memory))
    graph.add_node("respond", respond)
    graph.add_node("remember", remember_node(memory))
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "respond")
    graph.add_edge("respond", "remember")
    graph.add_edge("remember", END)
    return graph.compile()


SCRIPT = [{"text": "I moved to Lisbon last year", "facts": ["Lives in Lisbon since last year"],
           "entities": [("I", "person"), ("Lisbon", "city")], "relations": [("I", "lives_in", "Lisbon")]}]

if __name__ == "__main__":
    with models(SCRIPT) as config, Memory(config) as memory:
        agent = build(memory)
        config = {"configurable": {"user_id": "alice"}}
        agent.invoke({"messages": [{"role": "user", "content": "I moved to Lisbon last year"}]}, config)
        out = agent.invoke({"messages": [{"role": "user", "content": "Where do I live?"}]}, config)
        print(out["messages"][-1].content)
