"""Local sentence embeddings with an ONNX model (e.g. all-MiniLM-L6-v2), no network needed.

Needs the optional extra ``pip install 'graphmem[local]'`` (onnxruntime + tokenizers).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from graphmem.embeddings import models, quantize
from graphmem.embeddings.base import Embedder
from graphmem.errors import ConfigError, EmbeddingError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

_INSTALL_HINT = "pip install 'graphmem[local]'"
_POOLING_MODES = ("mean", "cls", "max", "mean_sqrt_len")
_DTYPES = {"tensor(int64)": np.int64, "tensor(int32)": np.int32}
_KNOWN_INPUTS = ("input_ids", "attention_mask", "token_type_ids")
#: tokens per text when max_length is not set (and the model allows as many)
DEFAULT_MAX_LENGTH = 256
#: the int8 copy's parallel callers at most (its session runs each call on one thread; _lanes)
MAX_LANES = 8


def _read_pooling(model_dir: Path) -> str:
    """Pooling mode from a sentence-transformers pooling config; mean when absent."""
    for candidate in (model_dir / "pooling_config.json", model_dir / "1_Pooling" / "config.json"):
        if not candidate.is_file():
            continue
        try:
            cfg = json.loads(candidate.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read pooling config {candidate}: {exc}") from exc
        if cfg.get("pooling_mode_cls_token"):
            return "cls"
        if cfg.get("pooling_mode_max_tokens"):
            return "max"
        if cfg.get("pooling_mode_mean_sqrt_len_tokens"):
            return "mean_sqrt_len"
        if cfg.get("pooling_mode_mean_tokens", True):
            return "mean"
        raise ConfigError(f"unsupported pooling mode in {candidate}; supported: {', '.join(_POOLING_MODES)}")
    return "mean"


def _max_positions(model_dir: Path) -> int | None:
    """max_position_embeddings from a Hugging Face config.json, if there is one."""
    try:
        cfg = json.loads((model_dir / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    value = cfg.get("max_position_embeddings") if isinstance(cfg, dict) else None
    return value if isinstance(value, int) and value > 1 else None


def _display_name(model_dir: Path) -> str:
    model_dir = model_dir.resolve()
    if model_dir.parent.name == "snapshots" and model_dir.parent.parent.name.startswith("models--"):
        return model_dir.parent.parent.name.rsplit("--", 1)[-1]  # a hub cache: models--org--name/snapshots/<commit>
    name = model_dir.name
    for suffix in ("-onnx", "_onnx", ".onnx"):
        if name.lower().endswith(suffix) and len(name) > len(suffix):
            return name[: -len(suffix)]
    return name


def _model_folder(model_dir: str | os.PathLike[str] | None, model: str | None, revision: str,
                  cache_dir: str | os.PathLike[str] | None) -> str | os.PathLike[str]:
    if model is not None and model_dir is not None:
        raise ConfigError("the onnx embedder takes model (a name to download) or model_dir (a folder), not both")
    if model is not None:
        from graphmem.embeddings.hub import model_folder

        return model_folder(model, revision, cache_dir)
    if model_dir is None:
        raise ConfigError("the onnx embedder needs config['model'] (e.g. 'sentence-transformers/all-MiniLM-L6-v2', "
                          "downloaded once) or config['model_dir'] (a folder with model.onnx and tokenizer.json)")
    return model_dir


def _check_settings(max_length: int, batch_size: int, threads: int | None, pooling: str | None) -> None:
    """The caller's settings, checked before any file is read."""
    if pooling is not None and pooling not in _POOLING_MODES:
        raise ConfigError(f"OnnxEmbedder pooling must be one of {', '.join(_POOLING_MODES)}, got {pooling!r}")
    if not isinstance(max_length, int) or max_length < 2:
        raise ConfigError(f"OnnxEmbedder max_length must be an integer >= 2, got {max_length!r}")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ConfigError(f"OnnxEmbedder batch_size must be a positive integer, got {batch_size!r}")
    if threads is not None and (not isinstance(threads, int) or threads < 1):
        raise ConfigError(f"OnnxEmbedder threads must be a positive integer or None, got {threads!r}")


def _model_files(model_dir: Path) -> tuple[Path, Path]:
    """The model and tokenizer files of a folder: a plain export, or a hub repository's layout."""
    if not model_dir.is_dir():
        raise ConfigError(f"ONNX model folder not found: {model_dir}")
    model_path = model_dir / "model.onnx"
    if not model_path.is_file() and (model_dir / "onnx" / "model.onnx").is_file():
        model_path = model_dir / "onnx" / "model.onnx"  # a hub repository's layout
    tokenizer_path = model_dir / "tokenizer.json"
    for required in (model_path, tokenizer_path):
        if not required.is_file():
            raise ConfigError(f"ONNX model folder {model_dir} has no {required.name} (expected {required})")
    return model_path, tokenizer_path


def _fingerprint(files: tuple[Path, ...], settings: list[str]) -> str | None:
    parts = list(settings)
    try:
        for path in files:
            stat = path.stat()
            parts += [str(path.resolve()), str(stat.st_size), str(stat.st_mtime_ns)]
    except OSError:
        return None
    return "\x1f".join(parts)


def _require_runtime() -> None:
    """The optional extra is checked before any file is read, so its absence names the fix."""
    try:
        import onnxruntime  # noqa: F401
        from tokenizers import Tokenizer  # noqa: F401
    except ImportError as exc:
        raise ConfigError(
            f"the local ONNX embedder needs onnxruntime and tokenizers: {_INSTALL_HINT}"
        ) from exc


def _load_tokenizer(tokenizer_path: Path, max_length: int) -> Tokenizer:
    """The tokenizer, padding to each batch's longest text and truncating at ``max_length``."""
    from tokenizers import Tokenizer

    try:
        tokenizer = Tokenizer.from_file(str(tokenizer_path))
    except Exception as exc:
        raise ConfigError(f"cannot load tokenizer {tokenizer_path}: {exc}") from exc
    padding = tokenizer.padding or {}
    pad_token = padding.get("pad_token") or "[PAD]"
    pad_id = padding.get("pad_id")
    if pad_id is None:
        pad_id = tokenizer.token_to_id(pad_token)
    if pad_id is None:
        pad_id = 0
    # tokenizer.json may ship fixed-length padding/truncation; pad to the batch's longest
    # text instead (much faster for short texts) and truncate at our max_length.
    tokenizer.enable_padding(pad_id=pad_id, pad_token=pad_token, pad_type_id=padding.get("pad_type_id", 0))
    tokenizer.enable_truncation(max_length=max_length)
    return tokenizer


def _open_session(model_path: Path, threads: int | None) -> Any:
    """An onnxruntime CPU session, quiet below errors, whose idle threads sleep instead of spinning.

    Why no spinning: a search embeds one short query, a run of many small parallel steps; between
    steps onnxruntime's threads busy-wait for the next. On a machine whose cores other work also
    wants (2 cores, a load of 4-8), the spinning threads took the cores from each other and from
    the caller: MiniLM's query embedding on BEAM dev questions was 21-39 ms p50 spinning and
    14-18 ms without (the same runs interleaved in one process); quiet, about 7-8 and 8.5 ms.
    The vectors are the same bits either way."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if threads is not None:
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
    options.log_severity_level = 3
    try:
        return ort.InferenceSession(str(model_path), sess_options=options, providers=["CPUExecutionProvider"])
    except Exception as exc:
        raise ConfigError(f"cannot load ONNX model {model_path}: {exc}") from exc


def _per_text(precision: str, threads: int | None) -> bool:
    """True for an int8 copy with no ``threads`` setting: its session gets one intra-op thread, each
    text is a call of its own, and the calls run side by side in ``_lanes`` (one per core, at
    most ``MAX_LANES``); otherwise onnxruntime's pool and batches.

    Why: the int8 graph is many small steps (each MatMul quantizes its input first); with
    onnxruntime's pool of sleeping threads (no spinning, ``_open_session``) waking the pool for each
    step costs more than the step saves. One query on BEAM dev questions, 2 cores, two sessions
    interleaved: bge-small int8 p50 / p95 11.0 / 18.5 ms on one thread against 13.5 / 23.4 on the
    default pool; MiniLM int8 6.1 / 10.1 against 8.8 / 14.7. fp32 steps are large enough to share:
    bge-small 23.0 / 35.8 on one thread against 18.8 / 29.3, so fp32 keeps the pool.

    Documents keep every core: the texts are spread over the lanes, one call each. One text per
    call pads nothing and quantizes each text's activations on its own scale, so an int8 vector no
    longer depends on which texts shared its batch (batched, MiniLM int8's cosine to the same text
    embedded alone was 0.989-0.993), and it is the fastest way through: bge-small int8 on 2 cores,
    BEAM messages 32 documents/s against 21 in batches of 32 and 17-19 on the pool; LOCOMO turns
    197 against 143 (fp32 ones at cosine 0.9972 on average against 0.9968)."""
    return precision != "fp32" and threads is None


def _lanes() -> int:
    """How many per-text calls run side by side: the process's cores, at most ``MAX_LANES``."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(MAX_LANES, cores))


def _open_model(model_path: Path, precision: str, threads: int | None) -> Any:
    """The model's session at ``precision``; an int8 copy that does not load is made again."""
    if precision == "fp32":
        return _open_session(model_path, threads)
    copy = quantize.int8_model(model_path)
    try:
        return _open_session(copy, threads)
    except ConfigError:  # a damaged copy (cut short, overwritten): made again once
        return _open_session(quantize.rebuild(model_path), threads)


def _model_inputs(session: Any, model_path: Path) -> dict[str, Any]:
    """The model's inputs and their integer types; an input we cannot feed is refused up front."""
    inputs: dict[str, Any] = {}
    for node in session.get_inputs():
        if node.name not in _KNOWN_INPUTS:
            raise ConfigError(
                f"ONNX model {model_path} declares an unsupported input {node.name!r}; "
                f"supported inputs: {', '.join(_KNOWN_INPUTS)}"
            )
        inputs[node.name] = _DTYPES.get(node.type, np.int64)
    if "input_ids" not in inputs:
        raise ConfigError(f"ONNX model {model_path} has no input_ids input")
    return inputs


def _model_output(session: Any) -> tuple[str, int | None]:
    """The output holding token embeddings, and its size when the model fixes it (else None)."""
    outputs = session.get_outputs()
    by_name = {o.name: o for o in outputs}
    output = by_name.get("last_hidden_state") or by_name.get("token_embeddings") or outputs[0]
    last_dim = output.shape[-1] if output.shape else None
    return output.name, (last_dim if isinstance(last_dim, int) and last_dim > 0 else None)



def _token_limit(asked: int | None, model_limit: int | None, folder: Path) -> int:
    """Tokens fed per text: the caller's, else the model's own limit bounded by DEFAULT_MAX_LENGTH
    (an add's embedding cost grows with the tokens: a 512-token bge pass is ~2.5x a 256 one); never
    more than the model's position embeddings hold (longer inputs would overflow them)."""
    limit = asked if asked is not None else min(model_limit or DEFAULT_MAX_LENGTH, DEFAULT_MAX_LENGTH)
    positions = _max_positions(folder)
    return positions if positions is not None and limit > positions else limit


class OnnxEmbedder(Embedder):
    """Sentence embeddings from ``model_dir/model.onnx`` and ``model_dir/tokenizer.json``.

    Texts are tokenised with padding (to the longest text of each batch) and truncation at
    ``max_length`` tokens, run through the model on CPU in batches of ``batch_size``, pooled over
    the attention mask (mode read from ``pooling_config.json``; mean by default) and
    L2-normalised. ``threads`` sets onnxruntime's intra-op thread count (default: its own; an int8
    copy with no ``threads`` runs one text per call on one thread, calls side by side: ``_per_text``).
    """

    def __init__(
        self,
        model_dir: str | os.PathLike[str] | None = None,
        max_length: int | None = None,
        batch_size: int = 32,
        threads: int | None = None,
        model: str | None = None,
        revision: str = "main",
        cache_dir: str | os.PathLike[str] | None = None,
        pooling: str | None = None,
        query_instruction: str | None = None,
        passage_instruction: str | None = None,
        score_floor: float | None = None,
        query_floor: float | None = None,
        precision: str = "fp32",
    ) -> None:
        """``model_dir`` (a folder) or ``model`` (a repository name, downloaded once at ``revision``
        into ``cache_dir``: embeddings/hub.py). Pooling, instructions, max length and score floor
        come from the model (embeddings/models.py: its table, then its folder); a value given here wins.
        ``precision`` "int8": the model's int8 copy, made once (embeddings/quantize.py)."""
        super().__init__()
        folder = _model_folder(model_dir, model, revision, cache_dir)
        _check_settings(256 if max_length is None else max_length, batch_size, threads, pooling)
        self.precision = quantize.check_precision(precision)
        self.model_dir = Path(folder).expanduser()
        model_path, tokenizer_path = _model_files(self.model_dir)
        _require_runtime()
        # the precision is part of the identity: an fp32 store is never searched with int8 vectors
        self.name = f"onnx:{_display_name(self.model_dir)}" + ("" if self.precision == "fp32" else f":{self.precision}")
        profile = models.resolve(model or _display_name(self.model_dir), self.model_dir, {
            "pooling": pooling, "query_instruction": query_instruction, "passage_instruction": passage_instruction,
            "max_length": max_length, "score_floor": score_floor, "query_floor": query_floor})
        self.max_length = max_length = _token_limit(max_length, profile.max_length, self.model_dir)
        self.batch_size = batch_size
        self.threads = threads
        self.pooling = profile.pooling or _read_pooling(self.model_dir)
        self.query_instruction, self.passage_instruction = profile.query_instruction, profile.passage_instruction
        self._tokenizer = _load_tokenizer(tokenizer_path, max_length)
        self._per_text = _per_text(self.precision, threads)
        self._lanes = _lanes() if self._per_text else 1
        self._session = _open_model(model_path, self.precision, 1 if self._per_text else threads)
        self._inputs = _model_inputs(self._session, model_path)
        self._output_name, dims = _model_output(self._session)
        # a symbolic last dimension: ask the model once
        self.dims = dims if dims is not None else len(self._run(["dimension probe"])[0])
        self._set_floors(profile)
        self._fingerprint = _fingerprint(
            (model_path, tokenizer_path), [self.name, self.precision, self.pooling, self.query_instruction, str(self.max_length), str(self.dims)]
            + (["one text per call"] if self._per_text else []))

    def _set_floors(self, profile: models.ModelProfile) -> None:
        """The cosines that mean "unrelated" for this model: from its table row, else measured."""
        if profile.score_floor is None:  # a model the table does not know: measured (not a caller's calls)
            floor, query_floor = models.floors(self.embed, self.embed_query)
            self.calls = 0
            self.score_floor = floor
            self.query_floor = profile.query_floor if profile.query_floor is not None else query_floor
        else:
            self.score_floor = profile.score_floor
            self.query_floor = profile.query_floor if profile.query_floor is not None else profile.score_floor
        self.rank_floor = profile.rank_floor

    def fingerprint(self) -> str | None:
        """The model and tokenizer files as they were loaded (resolved path, size, modification
        time: a stat per file, no read; hashing the weights would cost what a cache saves) and every
        setting that shapes a query's vector. None when the files could not be read."""
        return self._fingerprint

    # -- inference -----------------------------------------------------------------------

    def _run(self, texts: list[str]) -> np.ndarray:
        # one text (a search query): encode, not encode_batch, which hands even one text to the
        # tokenizer's thread pool (0.1 against 0.2-1.6 ms per BEAM question under load); same ids
        encodings = [self._tokenizer.encode(texts[0])] if len(texts) == 1 else self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        feeds: dict[str, np.ndarray] = {}
        for name, dtype in self._inputs.items():
            if name == "input_ids":
                feeds[name] = ids.astype(dtype, copy=False)
            elif name == "attention_mask":
                feeds[name] = mask.astype(dtype, copy=False)
            else:  # token_type_ids
                feeds[name] = np.array([e.type_ids for e in encodings], dtype=dtype)
        (hidden,) = self._session.run([self._output_name], feeds)
        hidden = np.asarray(hidden, dtype=np.float32)
        if hidden.ndim == 2:  # the model already pools
            return hidden
        if hidden.ndim != 3:
            raise EmbeddingError(f"{self.name}: unexpected model output shape {hidden.shape}")
        weights = mask.astype(np.float32)[:, :, None]
        if self.pooling == "cls":
            cls: np.ndarray = hidden[:, 0, :]
            return cls
        if self.pooling == "max":
            masked = np.where(weights > 0, hidden, -np.inf)
            peak: np.ndarray = masked.max(axis=1)
            return peak
        summed: np.ndarray = (hidden * weights).sum(axis=1)
        counts: np.ndarray = np.clip(weights.sum(axis=1), 1e-9, None)
        if self.pooling == "mean_sqrt_len":
            counts = np.sqrt(counts)
        mean: np.ndarray = summed / counts
        return mean

    def _embed(self, texts: list[str]) -> np.ndarray:
        if self._per_text:  # one text per call, the calls side by side (_per_text)
            if len(texts) == 1 or self._lanes == 1:
                return np.concatenate([self._run([text]) for text in texts])
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(min(self._lanes, len(texts)), thread_name_prefix="graphmem-onnx") as pool:
                return np.concatenate(list(pool.map(lambda text: self._run([text]), texts)))
        # Sort by length so each batch pads to similar lengths; restore the order afterwards.
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        result = np.empty((len(texts), self.dims), dtype=np.float32)
        for start in range(0, len(order), self.batch_size):
            chunk = order[start : start + self.batch_size]
            result[chunk] = self._run([texts[i] for i in chunk])
        return result

    def __repr__(self) -> str:
        return (
            f"OnnxEmbedder(model_dir={str(self.model_dir)!r}, dims={self.dims}, max_length={self.max_length}, "
            f"batch_size={self.batch_size}, precision={self.precision!r}, pooling={self.pooling!r}, query_instruction={self.query_instruction!r}, "
            f"passage_instruction={self.passage_instruction!r}, score_floor={self.score_floor}, query_floor={self.query_floor}, rank_floor={self.rank_floor})"
        )
