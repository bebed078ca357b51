"""The add pipeline (extraction → one embedding batch → resolution → decisions → one write)."""

from graphmem.pipeline.add import AddOutcome, AddPipeline

__all__ = ["AddOutcome", "AddPipeline"]
