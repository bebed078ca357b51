"""The local embedder's model by name: downloaded once through ``huggingface_hub`` into a cache.

    {"provider": "onnx", "config": {"model": "sentence-transformers/all-MiniLM-L6-v2"}}

The files an ONNX sentence model needs (``onnx/model.onnx``, ``tokenizer.json``, ``config.json``,
and, when the repository has them, ``1_Pooling/config.json`` and sentence-transformers' prompt and
length files: embeddings/models.py) are fetched on first use; later starts
read them from the cache without a request. Where from and where to:
- ``HF_ENDPOINT`` (a mirror, a local server), else the hub's default;
- the cache: ``config.cache_dir``, else ``$HF_HUB_CACHE``, else ``$HF_HOME/hub``, else
  ``$GRAPHMEM_HOME/models`` (``~/.graphmem/models``).
``model_dir`` (a folder holding model.onnx and tokenizer.json) needs none of this.
"""

from __future__ import annotations

import os
from pathlib import Path

from graphmem.errors import ConfigError
from graphmem.home import graphmem_home

#: (path in the repository, required)
MODEL_FILES = (("onnx/model.onnx", True), ("tokenizer.json", True), ("config.json", False), ("1_Pooling/config.json", False),
               ("config_sentence_transformers.json", False), ("sentence_bert_config.json", False))
INSTALL_HINT = "pip install 'graphmem[local]'"
#: how long the reachability check waits for the hub to answer at all
PROBE_SECONDS = 5.0


def cache_dir(configured: str | os.PathLike[str] | None = None) -> Path:
    """Where downloaded models live (see the module docstring for the order)."""
    if configured:
        return Path(configured).expanduser()
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    return graphmem_home() / "models"


def model_folder(name: str, revision: str = "main", cache: str | os.PathLike[str] | None = None) -> Path:
    """The local folder of model ``name`` at ``revision``: from the cache, else downloaded into it."""
    if not isinstance(name, str) or name.count("/") != 1 or not all(name.split("/")):
        raise ConfigError(f"embedder model must be a repository name such as 'sentence-transformers/all-MiniLM-L6-v2', got {name!r}")
    try:
        import huggingface_hub  # noqa: F401
    except ImportError as exc:
        raise ConfigError(f"downloading the model {name!r} needs huggingface_hub: {INSTALL_HINT} (or set model_dir)") from exc
    folder = cache_dir(cache)
    cached = _fetch(name, revision, folder, local_only=True)
    if cached is not None:
        return cached
    _check_reachable(name)
    fetched = _fetch(name, revision, folder, local_only=False)
    assert fetched is not None
    return fetched


def _check_reachable(name: str) -> None:
    """One quick request to the hub before downloading: with no network, huggingface_hub retries each
    file for half a minute before saying so; this says it at once, with the ways on."""
    import urllib.error
    import urllib.request

    endpoint = (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")
    try:
        urllib.request.urlopen(urllib.request.Request(endpoint, method="HEAD"), timeout=PROBE_SECONDS).close()
    except urllib.error.HTTPError:
        return  # it answered: the download itself reports what it then meets
    except (OSError, ValueError) as exc:  # URLError is an OSError: refused, no route, no DNS, timed out
        reason = getattr(exc, "reason", exc)
        raise ConfigError(
            f"cannot download the embedding model {name!r}: the model hub at {endpoint} is unreachable from here "
            f"({reason}). Ways on: an embedder with nothing to download (graphmem init --profile offline --force: the "
            "hashing embedder); a model folder you already have (embedder.config.model_dir, or graphmem init --profile "
            "download --model-dir DIR --force); or HF_ENDPOINT set to a mirror you can reach."
        ) from exc


def _fetch(name: str, revision: str, folder: Path, local_only: bool) -> Path | None:
    """Every model file through hf_hub_download; None when ``local_only`` and a required one is not cached."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import EntryNotFoundError, LocalEntryNotFoundError

    endpoint = os.environ.get("HF_ENDPOINT") or None  # read now, not at huggingface_hub's import
    snapshot: Path | None = None
    for path, required in MODEL_FILES:
        try:
            local = Path(hf_hub_download(name, path, revision=revision, cache_dir=folder, endpoint=endpoint,
                                         local_files_only=local_only))
        except LocalEntryNotFoundError as exc:  # not cached; when downloading: the endpoint did not answer
            if local_only:
                if required:
                    return None
                continue
            raise ConfigError(f"cannot download {path} of the model {name!r} from {endpoint or 'the default hub endpoint'}: "
                              f"{exc} (set HF_ENDPOINT to a reachable mirror, or embedder.config.model_dir to a local folder)") from exc
        except EntryNotFoundError as exc:
            if required:
                raise ConfigError(f"the model {name!r} has no {path} (an ONNX sentence model needs it)") from exc
            continue
        except Exception as exc:  # network, HTTP, disk: one clear error, never the library's own
            where = endpoint or "the default hub endpoint"
            raise ConfigError(f"cannot download {path} of the model {name!r} from {where}: {type(exc).__name__}: {exc} "
                              "(set HF_ENDPOINT to a reachable mirror, or embedder.config.model_dir to a local folder)") from exc
        if path == "tokenizer.json":
            snapshot = local.parent
    return snapshot
