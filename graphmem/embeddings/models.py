"""What a sentence-embedding model needs besides its weights: pooling, query/passage instructions,
maximum length and score scale. From a small table of well-known models, and from what a model
folder says (sentence-transformers' ``config_sentence_transformers.json`` prompts,
``sentence_bert_config.json`` max length, the pooling config); explicit settings win over both.

The score scale: models spread cosines differently. all-MiniLM-L6-v2 gives unrelated sentences
about 0 and paraphrases 0.6-0.9; bge-small-en-v1.5 gives unrelated ones 0.4-0.5; e5 ~0.7. graphmem's
thresholds (search ``threshold``, a preset's ``seed_threshold``, entity matching, the update stage's
similar memories) are stated on MiniLM's scale, i.e. as *relative* similarity with 0 = unrelated
and 1 = identical, and each embedder maps them to its own cosine: ``floor + t * (1 - floor)``
(``Embedder.cosine_for``). Two floors: between stored texts (entity matching, similar memories) and
from a search query to a stored text (search threshold, seed threshold): with its query instruction
bge puts an unrelated question at 0.34 from a statement, two unrelated statements at 0.43. A model
not in the table gets both measured once at load (``floors``: unrelated English sentences and
questions).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from graphmem.errors import ConfigError

BGE_QUERY = "Represent this sentence for searching relevant passages: "


@dataclass(frozen=True)
class ModelProfile:
    #: "mean", "cls", "max", "mean_sqrt_len"; None: read the folder's pooling config (mean if none)
    pooling: str | None = None
    #: prefixed to search queries only (Embedder.embed_query)
    query_instruction: str = ""
    #: prefixed to every stored text (documents, entity names)
    passage_instruction: str = ""
    #: tokens per text the model was trained with; None: the folder's or 256
    max_length: int | None = None
    #: typical cosine of two unrelated stored texts (0 = unrelated ... 1 = same); None: measured at load
    score_floor: float | None = None
    #: typical cosine of a search query (its instruction prefixed) and an unrelated stored text;
    #: None: measured at load (or the score floor when that was given)
    query_floor: float | None = None
    #: the cosine at which a candidate's meaning starts to count when search ranks (the fusion's
    #: vector signal: (cosine - rank_floor) / (1 - rank_floor)); None: the query floor
    rank_floor: float | None = None


#: well-known models by their name without the organisation, lower-cased. Floors: measured as at
#: load (models.floors) with bge-small-en-v1.5: 0.43 between statements, 0.34 from a question with
#: bge's instruction; MiniLM's (0.04, 0.00) are taken as 0: the scale graphmem's thresholds were tuned
#: on. The other bge sizes share the small one's (not measured here); e5's from its card's "0.7 to 1.0".
#: bge's rank floor (0.5) is not the unrelated-question floor: ranked against 0.34 its better meaning
#: kept too little contrast between candidates and the words outvoted it (LOCOMO dev 0.769 against
#: vector alone 0.639, BEAM dev conv. 1 0.491). Measured on both dev sets: rank floor 0.34 / 0.43 /
#: 0.5 / 0.55 / 0.6 -> LOCOMO 0.769 / 0.780 / 0.802 / 0.791 / 0.766, BEAM conv. 1 0.491 / 0.520 /
#: 0.638 / 0.628 / 0.628 (docs/retrieval.md). 0.5 is also where a bge question meets the typical
#: message of a conversation that does not answer it (median cosine 0.48-0.55 on both sets).
#: MiniLM's stays 0: any higher floor cost its LOCOMO multi-hop questions (0.1: 0.459 -> 0.430).
_BGE = ModelProfile("cls", BGE_QUERY, max_length=512, score_floor=0.43, query_floor=0.34, rank_floor=0.5)
_E5 = ModelProfile("mean", "query: ", "passage: ", max_length=512, score_floor=0.7, query_floor=0.7)
_MINILM = ModelProfile("mean", max_length=256, score_floor=0.0, query_floor=0.0)
KNOWN: dict[str, ModelProfile] = {
    "all-minilm-l6-v2": _MINILM, "all-minilm-l12-v2": _MINILM,
    "bge-small-en-v1.5": _BGE, "bge-base-en-v1.5": _BGE, "bge-large-en-v1.5": _BGE,
    "e5-small-v2": _E5, "e5-base-v2": _E5, "e5-large-v2": _E5,
    "multilingual-e5-small": _E5, "multilingual-e5-base": _E5, "multilingual-e5-large": _E5,
}

#: unrelated sentences whose mean pairwise cosine is a model's floor when the table does not know it
CALIBRATION = (
    "The train to Lyon leaves at seven in the morning.",
    "Add two cups of flour and stir until smooth.",
    "The database migration failed because of a missing index.",
    "My grandmother grew tomatoes in her garden every summer.",
    "The striker scored twice in the second half.",
    "Quarterly revenue rose by four percent.",
    "Penguins huddle together to survive the Antarctic winter.",
    "Please remember to water the plants while I'm away.",
)

#: questions unrelated to every CALIBRATION sentence: the query floor's side
CALIBRATION_QUESTIONS = (
    "Which city do I live in?",
    "How do I reset my router password?",
    "What is my sister's favourite band?",
    "When is the dentist appointment?",
)


def known(name: str) -> ModelProfile | None:
    """The table's profile of a model name ("BAAI/bge-small-en-v1.5", a folder name such as
    "bge-small-en-v1.5-onnx", or a hub cache's "models--BAAI--bge-small-en-v1.5")."""
    key = name.strip().rstrip("/").rsplit("/", 1)[-1].rsplit("--", 1)[-1].lower()
    for suffix in ("-onnx", "_onnx", ".onnx"):
        if key.endswith(suffix):
            key = key[: -len(suffix)]
    return KNOWN.get(key)


def from_folder(folder: Path) -> ModelProfile:
    """What the folder's sentence-transformers files say (unset fields stay None / empty)."""
    st = _json(folder / "config_sentence_transformers.json")
    found = st.get("prompts")
    prompts: dict[str, Any] = found if isinstance(found, dict) else {}
    query = prompts.get("query") or prompts.get("search_query") or ""
    passage = prompts.get("passage") or prompts.get("document") or prompts.get("search_document") or ""
    bert = _json(folder / "sentence_bert_config.json")
    length = bert.get("max_seq_length")
    graphmem = _json(folder / "graphmem_model.json")  # an explicit profile shipped beside a private model
    floor, query_floor = graphmem.get("score_floor"), graphmem.get("query_floor")
    return ModelProfile(
        pooling=None,
        query_instruction=str(graphmem.get("query_instruction", query)),
        passage_instruction=str(graphmem.get("passage_instruction", passage)),
        max_length=length if isinstance(length, int) and length > 1 else None,
        score_floor=_float(floor),
        query_floor=_float(query_floor) if _float(floor) is not None else None,
        rank_floor=_float(graphmem.get("rank_floor")),
    )


def resolve(name: str, folder: Path, overrides: dict[str, Any]) -> ModelProfile:
    """Table, then folder, then explicit settings (``None`` in overrides means "not given")."""
    profile = known(name) or ModelProfile()
    found = from_folder(folder)
    for field in ("query_instruction", "passage_instruction"):
        if getattr(found, field):
            profile = replace(profile, **{field: getattr(found, field)})
    if found.max_length is not None and profile.max_length is None:
        profile = replace(profile, max_length=found.max_length)
    if found.score_floor is not None:
        profile = replace(profile, score_floor=found.score_floor, query_floor=found.query_floor)
    if found.rank_floor is not None:
        profile = replace(profile, rank_floor=found.rank_floor)
    given = {k: v for k, v in overrides.items() if v is not None}
    _check(given)
    return replace(profile, **given)


def floors(embed: Callable[[list[str]], list[list[float]]], embed_query: Callable[[str], list[float]]) -> tuple[float, float]:
    """(score floor, query floor) measured: the mean cosine between CALIBRATION's sentences, and from
    CALIBRATION_QUESTIONS (as queries) to them."""
    docs = np.asarray(embed(list(CALIBRATION)))
    sims = docs @ docs.T
    n = len(docs)
    questions = np.asarray([embed_query(q) for q in CALIBRATION_QUESTIONS])
    return round(float((sims.sum() - n) / (n * n - n)), 3), round(float((questions @ docs.T).mean()), 3)


def _check(given: dict[str, Any]) -> None:
    for field in ("query_instruction", "passage_instruction"):
        if field in given and not isinstance(given[field], str):
            raise ConfigError(f"OnnxEmbedder {field} must be a string, got {given[field]!r}")
    for field in ("score_floor", "query_floor"):
        floor = given.get(field)
        if floor is not None and (isinstance(floor, bool) or not isinstance(floor, (int, float)) or not -1.0 <= floor < 1.0):
            raise ConfigError(f"OnnxEmbedder {field} must be a cosine in [-1, 1), got {floor!r}")


def _float(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}
