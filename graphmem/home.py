"""graphmem's own folder: ``$GRAPHMEM_HOME``, else ``~/.graphmem``; read when asked, so a process
that changes its environment (a test, a CLI flag) is followed. Holds the embedded store and history
by default, the launcher's build, downloaded models and caches (docs/configuration.md).

A store keeps the embedder it was built with (its vectors mean nothing to another model), so the
embedded store's default folder follows the embedder: ``graph`` for ``Memory()``'s default (OpenAI's
text-embedding-3-small, where every default store has always been) and ``graph-<embedder>`` for any
other, so the README's quickstarts, run one after the other in one home, each find their own store.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: the embedder of ``Memory()`` with no config: its store keeps the historical folder name
_DEFAULT_EMBEDDER = ("openai", "text-embedding-3-small")


def graphmem_home() -> Path:
    return Path(os.environ.get("GRAPHMEM_HOME") or Path.home() / ".graphmem").expanduser()


def default_store_folder(provider: str, config: Mapping[str, Any], home: Path | None = None) -> Path:
    """The embedded store's folder when ``graph_store.config.path`` is not set, for this embedder."""
    base = home if home is not None else graphmem_home()
    return base / f"graph{_embedder_suffix(provider, config)}"


def _embedder_suffix(provider: str, config: Mapping[str, Any]) -> str:
    """"" for Memory()'s default embedder, else "-<provider>[-<model>][-<dims>][-<precision>]": every
    setting that changes the vectors (a model, its size, its precision) changes the folder."""
    dims = config.get("dims") or config.get("embedding_dims")
    if provider == "hashing":
        return f"-hashing-{dims or 256}"
    model = config.get("model") or config.get("model_dir")
    if provider == "openai":
        model = model or _DEFAULT_EMBEDDER[1]
        if (provider, model) == _DEFAULT_EMBEDDER and not dims:
            return ""
    parts = [provider, Path(str(model)).name if model else "", str(dims or ""),
             str(config.get("precision") or "fp32") if provider == "onnx" else ""]
    return "-" + "-".join(_slug(p) for p in parts if p and _slug(p))


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._-").lower()[:60]
