"""mem0 compatibility: ``mem0_config`` translates mem0 1.x configs into graphmem's (used by
:mod:`graphmem.config`, so it imports only errors and types); ``mem0_import`` copies a mem0 store
into graphmem (an interface over the facade, used by the CLI).

May import the foundation, the models, stores and lifecycle (memory only in mem0_import).
"""
