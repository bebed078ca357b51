"""The LLM stages.

One module per LLM stage: its prompt (prompts/), tool schema and pydantic result. May import the
foundation and llm; never stores, retrieval, ingest or anything above.
"""
