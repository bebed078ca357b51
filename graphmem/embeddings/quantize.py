"""An ONNX embedding model's int8 copy, made once and kept under ``$GRAPHMEM_HOME/cache/onnx-int8/``.

Dynamic quantization (onnxruntime.quantization.quantize_dynamic): the weights of every MatMul and
Gather become signed 8-bit integers with one scale per output channel; activations are quantized on
the fly. Measured (docs/models.md, "int8"): the query embedding 1.4x (bge-small-en-v1.5) and 1.7x
(all-MiniLM-L6-v2) faster, half the memory; the vectors move a little (cosine 0.997 to the fp32
ones on LOCOMO turns with bge), so a store's vectors never mix precisions (the embedder's name and
fingerprint carry it; stores/precision.py). Not kept: one scale per tensor (MiniLM cosine 0.95
against 0.99); onnxruntime's transformer optimizer first (onnxruntime fuses at load already; fused
then quantized ran slower).

The copy is keyed by the source file's identity (resolved path, size, modification time) and the
recipe, written whole (temp file + rename); a copy that does not load is made again (``rebuild``).
Making it needs the ``onnx`` package (``pip install 'graphmem[local]'``); loading it does not.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path

from graphmem.errors import ConfigError
from graphmem.home import graphmem_home

PRECISIONS = ("fp32", "int8")
#: part of every copy's key: a change of recipe makes new copies instead of reading old ones
RECIPE = "dynamic-qint8-per-channel-v1"
_INSTALL_HINT = "pip install 'graphmem[local]'"
log = logging.getLogger(__name__)


def check_precision(precision: object) -> str:
    if precision not in PRECISIONS:
        raise ConfigError(f"OnnxEmbedder precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    return str(precision)


def cache_dir() -> Path:
    return graphmem_home() / "cache" / "onnx-int8"


def cached_path(source: Path) -> Path:
    """Where the int8 copy of ``source`` lives (whether or not it exists yet)."""
    try:
        stat = source.stat()
    except OSError as exc:
        raise ConfigError(f"cannot read ONNX model {source}: {exc}") from exc
    identity = "\x1f".join([str(source.resolve()), str(stat.st_size), str(stat.st_mtime_ns), RECIPE])
    key = hashlib.sha256(identity.encode()).hexdigest()[:24]
    stem = "".join(c if c.isalnum() or c in "-_." else "_" for c in _label(source))[:60]
    return cache_dir() / f"{stem}-{key}.onnx"


def _label(source: Path) -> str:
    """A readable name for the copy: the model's folder (a hub cache's repository name; a hub
    layout's onnx/ folder is skipped), as the caller named it, before symlinks are followed."""
    parts = source.absolute().parts[:-1]
    repo = next((p for p in reversed(parts) if p.startswith("models--")), None)
    if repo is not None:
        return repo.rsplit("--", 1)[-1]
    return parts[-2] if parts[-1] == "onnx" and len(parts) > 1 else parts[-1]


def int8_model(source: Path) -> Path:
    """The int8 copy of ``source``: the cached one, made first when there is none."""
    target = cached_path(source)
    return target if target.is_file() else rebuild(source)


def rebuild(source: Path) -> Path:
    """Quantize ``source`` into its cache file again (a missing or damaged copy)."""
    target = cached_path(source)
    try:
        from onnxruntime.quantization import QuantType, quantize_dynamic
    except ImportError as exc:
        raise ConfigError(f"precision 'int8' quantizes the model once and needs the onnx package: {_INSTALL_HINT}") from exc
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".quantizing-", suffix=".onnx")
        os.close(fd)
    except OSError as exc:
        raise ConfigError(f"cannot write the int8 model cache in {target.parent} (set GRAPHMEM_HOME): {exc}") from exc
    log.info("quantizing %s to int8 once (into %s)", source, target)
    quiet = logging.NullHandler()  # the quantizer's advice goes to the root logger, which would
    logging.getLogger().addHandler(quiet)  # configure itself to print it on stderr: kept out
    try:
        quantize_dynamic(str(source), tmp, weight_type=QuantType.QInt8, per_channel=True)
        os.chmod(tmp, 0o644)  # mkstemp made it private; a model copy is not a secret
        os.replace(tmp, target)
    except ImportError as exc:  # quantize_dynamic imports onnx itself
        raise ConfigError(f"precision 'int8' quantizes the model once and needs the onnx package: {_INSTALL_HINT}") from exc
    except Exception as exc:  # noqa: BLE001 - the quantizer raises whatever its model walk meets
        raise ConfigError(f"cannot quantize ONNX model {source} to int8: {exc}") from exc
    finally:
        logging.getLogger().removeHandler(quiet)
        Path(tmp).unlink(missing_ok=True)
    return target
