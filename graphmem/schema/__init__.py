"""The shared vocabulary below every layer: the ``ontology`` a graph may be held to, the filter
languages (``filters`` for memories and relations, ``type_filters`` for entity types) and
``resources``, the loader of the Cypher statements and prompt templates graphmem ships.
Imports only :mod:`graphmem.errors` and :mod:`graphmem.types`.
"""
