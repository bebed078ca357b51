"""Graph stores: ``neo4j`` (production) and ``embedded`` (zero set-up), one contract (base.py)."""

from graphmem.stores.base import EntityCandidate, GraphQuery, GraphStore

__all__ = ["EntityCandidate", "GraphQuery", "GraphStore"]
