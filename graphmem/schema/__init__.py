"""The shared vocabulary below every layer: the ``ontology`` a graph may be held to, the filter
languages (``filters`` for memories and relations, ``type_filters`` for entity types) and
``resources``, the loader of the Cypher statements and prompt templates graphmem ships,
``literals`` (the only way a value becomes Cypher text: exported scripts, Browser URLs) and
``labels`` (the display labels an entity's type is written as, which Browser's style colours).
May import only :mod:`graphmem.errors` and :mod:`graphmem.types`.
"""
