"""Graph stores: ``neo4j`` (production) and ``embedded`` (zero set-up), one contract (base.py).

Owns the store contract and both stores. May import the foundation (errors, types, results,
schema, launcher) and embeddings; never retrieval, ingest, lifecycle, the facade or an interface.
"""

from graphmem.stores.base import EntityCandidate, GraphQuery, GraphStore

__all__ = ["EntityCandidate", "GraphQuery", "GraphStore"]
