"""The Neo4j graph store (Neo4j 5.26+, single server, cluster or Aura)."""

from graphmem.stores.neo4j.store import Neo4jStore

__all__ = ["Neo4jStore"]
