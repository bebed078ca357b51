"""Glue for agent frameworks (optional extras): langgraph.py for LangGraph.

An interface: may import the facade and anything below it; nothing in graphmem imports it.
"""
