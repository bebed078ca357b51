"""Everything on the way in: the add pipeline (``add``: extraction → one embedding batch →
resolution → decisions → one write; ``single_pass``: the same with one model request), the bulk and
verbatim lanes, message parsing, the extraction context and importers. Imports stages, stores,
llm, embeddings, schema and lifecycle.history; never the facade or an interface.

May import the foundation, the models, stores, retrieval and lifecycle; the facade only to
build a Memory for ``graphmem import`` (importer.run). Never an interface.

The package imports none of its modules itself: ``graphmem --help`` and the import command's
parser must not load the pipeline (numpy, pydantic) just by naming ``graphmem.ingest.importer``.
"""
