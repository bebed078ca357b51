"""An optional reranker stage: a cross-encoder reads (question, memory) pairs and re-orders the
fused top N. Off unless a reranker is given (``Memory(reranker=...)``): no model ships with
graphmem, the user brings a local ONNX folder (``OnnxCrossEncoder``) or any object with ``score``.

Why a stage and not a signal: a cross-encoder reads the question and the text together, which no
bi-encoder or word match does, but it costs one model call per pair; it is run on the few
candidates the cheap signals already ranked best (``SearchPreset.rerank_top``).
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any, Protocol

from graphmem.errors import ConfigError, RerankError
from graphmem.types import MemoryItem

_INPUTS = ("input_ids", "attention_mask", "token_type_ids")


class Reranker(Protocol):
    """Scores (query, text) pairs: higher is more relevant. One score per text, finite."""

    name: str

    def score(self, query: str, texts: list[str]) -> list[float]: ...


def rerank(items: list[MemoryItem], query: str, reranker: Reranker, top_n: int) -> list[MemoryItem]:
    """The first ``top_n`` items re-ordered by the reranker's score (ties keep the fused order), the
    rest after them unchanged. The fused score stays in ``scores["fused"]``; ``score`` becomes the
    reranker's, so a caller sees which order it gets."""
    head, tail = items[:top_n], items[top_n:]
    if not head:
        return items
    try:
        scores = [float(s) for s in reranker.score(query, [m.text for m in head])]
    except RerankError:
        raise
    except Exception as exc:  # a user's scorer or the model runtime: reported as graphmem's error
        raise RerankError(f"reranker {getattr(reranker, 'name', reranker)!r} failed: {exc}") from exc
    if len(scores) != len(head) or not all(math.isfinite(s) for s in scores):
        raise RerankError(f"reranker {getattr(reranker, 'name', reranker)!r} returned {len(scores)} scores "
                          f"for {len(head)} texts, or a score that is not a finite number")
    for m, s in zip(head, scores, strict=True):
        m.scores["fused"] = m.score or 0.0
        m.scores["rerank"] = s
        m.score = s
    order = sorted(range(len(head)), key=lambda i: (-scores[i], i))
    return [head[i] for i in order] + tail


class OnnxCrossEncoder:
    """A cross-encoder from a local folder: ``model.onnx`` (inputs among input_ids, attention_mask,
    token_type_ids; one output of shape (pairs, 1) or (pairs, 2): a relevance logit, or two-class
    logits whose second is "relevant") and ``tokenizer.json`` (pairs encoded as the model was
    trained: [CLS] query [SEP] text [SEP]). A model of any other shape is refused when loaded."""

    def __init__(self, model_dir: str | os.PathLike[str], max_length: int = 512) -> None:
        self.model_dir = Path(model_dir).expanduser()
        model, tokenizer_path = self.model_dir / "model.onnx", self.model_dir / "tokenizer.json"
        for required in (model, tokenizer_path):
            if not required.is_file():
                raise ConfigError(f"reranker folder {self.model_dir} has no {required.name}")
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ConfigError("the ONNX reranker needs onnxruntime and tokenizers: pip install 'graphmem[local]'") from exc
        try:
            self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
            self._session = ort.InferenceSession(str(model), providers=["CPUExecutionProvider"])
        except Exception as exc:
            raise ConfigError(f"cannot load the reranker in {self.model_dir}: {exc}") from exc
        self._tokenizer.enable_truncation(max_length=max_length)
        self._tokenizer.enable_padding()
        self._inputs = [i.name for i in self._session.get_inputs()]
        outputs = self._session.get_outputs()
        shape = outputs[0].shape if outputs else []
        if not set(self._inputs) <= set(_INPUTS) or "input_ids" not in self._inputs or len(shape) != 2 or shape[-1] not in (1, 2):
            raise ConfigError(f"{model} is not a cross-encoder: inputs {self._inputs}, first output shape {shape} "
                              "(expected input_ids [+ attention_mask, token_type_ids] -> (pairs, 1 or 2))")
        self.name = f"onnx-cross-encoder:{self.model_dir.name}"

    def score(self, query: str, texts: list[str]) -> list[float]:
        import numpy as np  # only a cross-encoder needs it: searches without one never import it

        encodings = self._tokenizer.encode_batch([(query, t) for t in texts])
        columns = {"input_ids": "ids", "attention_mask": "attention_mask", "token_type_ids": "type_ids"}
        feeds: dict[str, Any] = {name: np.array([getattr(e, columns[name]) for e in encodings], dtype=np.int64)
                                 for name in self._inputs}
        (logits,) = self._session.run([self._session.get_outputs()[0].name], feeds)
        logits = np.asarray(logits, dtype=np.float64)
        return [float(x) for x in (logits[:, -1] if logits.shape[-1] == 2 else logits[:, 0])]
