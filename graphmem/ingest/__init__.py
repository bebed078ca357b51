"""Everything on the way in: the add pipeline (``add``: extraction → one embedding batch →
resolution → decisions → one write; ``single_pass``: the same with one model request), the bulk and
verbatim lanes, message parsing, the extraction context and importers. Imports stages, stores,
llm, embeddings, schema and lifecycle.history; never the facade or an interface.

May import the foundation, the models, stores, retrieval and lifecycle; the facade only to
build a Memory for ``graphmem import`` (importer.run). Never an interface.
"""

from graphmem.ingest.add import AddOutcome, AddPipeline

__all__ = ["AddOutcome", "AddPipeline"]
