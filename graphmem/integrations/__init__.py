"""Glue for agent frameworks (optional extras): langgraph.py for LangGraph."""
