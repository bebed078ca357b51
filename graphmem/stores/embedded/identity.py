"""The precision of the embedder that built an embedded store, kept beside its journal.

A store's vectors must all come from one embedder: the dimension check catches another model of
another size, and this record catches the same model at another precision (an fp32 store searched
with int8 query vectors ranks slightly wrong and says nothing). ``embedder.json`` holds
``{"precision": ...}``; a store without it was built at fp32 (before int8 existed). The first
embedder to write an empty store sets it; a store with vectors refuses another precision.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from graphmem.errors import ConfigError, StoreError

FILE = "embedder.json"


def recorded(folder: Path) -> str:
    try:
        data = json.loads((folder / FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return "fp32"
    except (OSError, ValueError) as exc:
        raise StoreError(f"cannot read {folder / FILE}: {exc}") from exc
    precision = data.get("precision") if isinstance(data, dict) else None
    if not isinstance(precision, str):
        raise StoreError(f"{folder / FILE} names no precision")
    return precision


def check(folder: Path, precision: str | None, holds_vectors: bool, read_only: bool) -> None:
    """Refuse ``precision`` for a store whose vectors were made at another; record it on an empty
    store. None: the caller does not embed (export, doctor), nothing checked."""
    if precision is None:
        return
    built = recorded(folder)
    if built == precision:
        return
    if holds_vectors:
        raise ConfigError(
            f"graph store {folder} holds {built} embeddings, not the {precision} of the configured embedder: "
            "a store keeps the embedder it was built with (its precision too). Configure the embedder's "
            f"precision {built!r}, or give this embedder its own folder (graph_store.config.path)")
    if not read_only:
        _write(folder, precision)


def _write(folder: Path, precision: str) -> None:
    tmp = folder / f".{FILE}.tmp"
    try:
        tmp.write_text(json.dumps({"precision": precision}), encoding="utf-8")
        os.replace(tmp, folder / FILE)
    except OSError as exc:
        raise StoreError(f"cannot write {folder / FILE}: {exc}") from exc
