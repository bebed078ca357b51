"""The zero-setup default store: in-process on networkx, durable in a folder on disk."""

from graphmem.stores.embedded.store import EmbeddedStore

__all__ = ["EmbeddedStore"]
