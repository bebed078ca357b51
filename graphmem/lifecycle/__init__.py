"""What happens to data after an add: the audit ``history`` (SQLite), ``retention`` (expiry, TTL,
erasure everywhere a copy lives), ``export`` (JSON, GraphML, Cypher) and ``load`` (an export back
into a store). Imports stores, schema and the vocabulary; never an interface (cli, server, ui).

May import the foundation, the models, stores and ingest; config and factory to open a
configured store, memory only for ``graphmem load``. Never an interface.
"""
