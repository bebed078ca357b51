"""The embedded store's record of its embedder's precision (stores/precision.py): ``embedder.json``
beside the journal, ``{"precision": ...}``."""

from __future__ import annotations

import json
import os
from pathlib import Path

from graphmem.errors import StoreError
from graphmem.stores import precision as record

FILE = "embedder.json"


def recorded(folder: Path) -> str | None:
    try:
        data = json.loads((folder / FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise StoreError(f"cannot read {folder / FILE}: {exc}") from exc
    precision = data.get("precision") if isinstance(data, dict) else None
    if not isinstance(precision, str):
        raise StoreError(f"{folder / FILE} names no precision")
    return precision


def check(folder: Path, precision: str | None, holds_vectors: bool, read_only: bool) -> None:
    """Refuse ``precision`` for a store whose vectors were made at another; record it on an empty one."""
    if precision is None:
        return
    if record.settle(str(folder), recorded(folder), precision, holds_vectors) and not read_only:
        _write(folder, precision)


def _write(folder: Path, precision: str) -> None:
    tmp = folder / f".{FILE}.tmp"
    try:
        tmp.write_text(json.dumps({"precision": precision}), encoding="utf-8")
        os.replace(tmp, folder / FILE)
    except OSError as exc:
        raise StoreError(f"cannot write {folder / FILE}: {exc}") from exc
