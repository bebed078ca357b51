"""Named, typed search presets so callers and benchmarks can compare retrieval set-ups."""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Literal, get_args

from graphmem.errors import InvalidInputError

Signal = Literal["vector", "bm25", "fulltext", "seed", "time", "path"]
Fusion = Literal["score", "rrf", "adaptive"]
SIGNALS: tuple[str, ...] = get_args(Signal)
FUSIONS: tuple[str, ...] = get_args(Fusion)


@dataclass(frozen=True)
class SearchPreset:
    """A retrieval set-up. Checked when built: an unknown signal or fusion name, or a weight that is
    not a finite number >= 0, raises InvalidInputError naming it (a typo would otherwise silently
    weigh nothing and return nothing)."""

    name: str
    #: weight per signal (vector, bm25, fulltext, seed, time); a signal with weight 0 is ignored
    weights: dict[str, float] = field(default_factory=dict)
    #: "score": weighted sum of max-normalised scores; "rrf": reciprocal-rank fusion; "adaptive":
    #: "score" with each lexical signal's weight scaled by its agreement with the vector signal on
    #: this query's candidates (fusion.adaptive_weights)
    fusion: Fusion = "score"
    rrf_k: int = 60
    #: memories only: an item gains ``context`` x the best own score of the messages just before and
    #: after it in its conversation (fetched with ``neighbours``); 0 ranks every memory on its own
    context: float = 0.0
    #: memories only: messages fetched before and after each of the best hits (one extra round trip;
    #: 0: none). ``neighbours_as``: "hits" ranks them as hits of their own, "context" attaches them
    #: to their hit as ``context``
    neighbours: int = 0
    #: memories only: an item gains ``session`` x how much of the ranking's head (the ``limit`` best,
    #: each as a share of the best) was said in its session (same run, same day); 0: off
    session: float = 0.0
    #: memories only: an item said by the user (role "user": the user's messages, and the facts the
    #: LLM extracts from them; or no role recorded) gains ``speaker`` when the candidates also hold
    #: another speaker's words (the assistant's messages stored verbatim); 0: off. Why: a memory is
    #: asked about its user, and what the user said about themselves is what the question means more
    #: often than the assistant's explanations around it (docs/retrieval.md, "The user's own words")
    speaker: float = 0.0
    neighbours_as: Literal["hits", "context"] = "hits"
    #: memories only: maximal marginal relevance over the fused head (retrieval.coverage.mmr): each
    #: next hit trades ``1 - diversity`` of its score for ``diversity`` x its word overlap with the
    #: hits above it; 0: off
    diversity: float = 0.0
    #: memories only: a question with several parts (conjunctions, several names) re-scores BM25 per
    #: part over the same candidates and interleaves the part rankings (retrieval.coverage)
    decompose: bool = False
    #: memories only: BM25's length normalisation (its ``b``, 0 to 1; 0.75 is the web-search habit).
    #: A conversation's messages are short and a long one is long because it says more, not because
    #: it repeats itself: at 0.75 the turn that tells the answer in one clause of a long message
    #: loses to short turns that repeat the question's words (docs/retrieval.md, "Length
    #: normalisation"). Relations keep 0.75
    bm25_b: float = 0.5
    #: memories only: with a reranker given to Memory (retrieval.rerank), how many of the fused best
    #: it re-orders (it reads each (question, text) pair: one model call per search)
    rerank_top: int = 20
    seed_top_k: int = 10
    seed_threshold: float = 0.3
    #: relations: search(hops=2) multiplies a seed's scores by this for each hop beyond the first
    hop_decay: float = 0.5
    #: relations only: weight per signal (vector: the fact cosine, bm25 over the fact text, fulltext,
    #: seed: nearness to an entity the query names or the user, path: hops=2 path match); None: ``weights``
    relation_weights: dict[str, float] | None = None
    #: relations only: each relation keeps ``1 - relation_spread`` of its score per relation of the
    #: same source and type ranked above it (retrieval.graph.spread); 0: off
    relation_spread: float = 0.0
    #: relations only: per seed entity, search reads at most this many of its relations (and of its
    #: two-hop paths), chosen in the store: the closest by fact cosine plus as many whose fact holds
    #: a query word (GraphQuery.relation_pool); a hub such as the user's own node then costs a
    #: bounded pool, not its hundreds of relations
    relation_pool: int = 100
    #: the embedder's query floor (the cosine of a query to an unrelated text; MiniLM 0, bge-small
    #: 0.34), set by Memory from its embedder (retrieval.scale.on_scale): the vector signal is fused
    #: as (cosine - floor) / (1 - floor), so every model's meaning counts on one scale
    vector_floor: float = 0.0

    #: memories only: the floor memory facts' cosines are fused from (the embedder's rank floor, set
    #: by on_scale: bge-small 0.5; relations keep ``vector_floor``: from 0.5 bge's short relation facts
    #: fell below it and lost their meaning, graph_retrieval paraphrase hit@10 0.919 -> 0.608); None: ``vector_floor``
    memory_vector_floor: float | None = None
    #: relations only: how much a fact's hubness (how much closer than an unrelated text it sits to
    #: generic questions; retrieval.hubness) is taken off its score; 0: the plain fact cosine
    relation_hubness: float = 0.0

    #: both halves: the vector signal's own best are kept near the top (retrieval.fusion.keep_anchor):
    #: its r-th best at position ``anchor * r`` at the latest; 0: off. Why: safety over averaging
    #: (docs/retrieval.md, "The anchor")
    anchor: float = 0.0
    #: relations only: the words (bm25, fulltext) count only when the question names an entity among
    #: the candidates' ends (retrieval.graph.names_an_entity; the user's own node too when the question
    #: says the user's name, not for "I / my"). Why: a question that
    #: names nothing ("who is my better half?") shares no word with its answer; its words then match
    #: relations that merely repeat one of them, and the fact's meaning is all there is to go on
    relation_words_need_a_name: bool = False
    #: adaptive fusion: signals counted as far as they are selective on this query's candidates (the
    #: share of candidates that do not carry them: retrieval.fusion.selectivity)
    selective: tuple[str, ...] = ("time",)

    def __post_init__(self) -> None:
        where = f"search preset {self.name!r}"
        _check_weights(where, "weights", self.weights)
        if self.relation_weights is not None:
            _check_weights(where, "relation_weights", self.relation_weights)
        if not _number(self.relation_spread) or not 0.0 <= self.relation_spread < 1.0:
            raise InvalidInputError(f"{where}: relation_spread must be a number in [0, 1), got {self.relation_spread!r}")
        if self.fusion not in FUSIONS:
            raise InvalidInputError(f"{where}: unknown fusion {self.fusion!r}; choose one of {', '.join(FUSIONS)}")
        for name, value, low in (("rrf_k", self.rrf_k, 1), ("seed_top_k", self.seed_top_k, 1), ("neighbours", self.neighbours, 0),
                                ("rerank_top", self.rerank_top, 1), ("relation_pool", self.relation_pool, 1)):
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InvalidInputError(f"{where}: {name} must be an integer >= {low}, got {value!r}")
        if not _number(self.session) or self.session < 0:
            raise InvalidInputError(f"{where}: session must be a finite number >= 0, got {self.session!r}")
        if not _number(self.speaker) or self.speaker < 0:
            raise InvalidInputError(f"{where}: speaker must be a finite number >= 0, got {self.speaker!r}")
        if not _number(self.diversity) or not 0.0 <= self.diversity <= 1.0:
            raise InvalidInputError(f"{where}: diversity must be a number in [0, 1], got {self.diversity!r}")
        if not _number(self.bm25_b) or not 0.0 <= self.bm25_b <= 1.0:
            raise InvalidInputError(f"{where}: bm25_b must be a number in [0, 1], got {self.bm25_b!r}")
        if not isinstance(self.decompose, bool):
            raise InvalidInputError(f"{where}: decompose must be True or False, got {self.decompose!r}")
        if not _number(self.context) or self.context < 0:
            raise InvalidInputError(f"{where}: context must be a finite number >= 0, got {self.context!r}")
        if self.neighbours_as not in ("hits", "context"):
            raise InvalidInputError(f"{where}: neighbours_as must be 'hits' or 'context', got {self.neighbours_as!r}")
        floors = {"vector_floor": self.vector_floor}
        if self.memory_vector_floor is not None:
            floors["memory_vector_floor"] = self.memory_vector_floor
        for floor_name, floor in floors.items():
            if not _number(floor) or not 0.0 <= floor < 1.0:
                raise InvalidInputError(f"{where}: {floor_name} must be a number in [0, 1), got {floor!r}")
        if not _number(self.relation_hubness) or not 0.0 <= self.relation_hubness <= 2.0:
            raise InvalidInputError(f"{where}: relation_hubness must be a number in [0, 2], got {self.relation_hubness!r}")
        if not isinstance(self.relation_words_need_a_name, bool):
            raise InvalidInputError(f"{where}: relation_words_need_a_name must be True or False, got {self.relation_words_need_a_name!r}")
        if not isinstance(self.selective, tuple) or any(name not in SIGNALS for name in self.selective):
            raise InvalidInputError(f"{where}: selective must be a tuple of signals ({', '.join(SIGNALS)}), got {self.selective!r}")
        if not _number(self.anchor) or not (self.anchor == 0 or 1.0 <= self.anchor <= 100.0):
            raise InvalidInputError(f"{where}: anchor must be 0 (off) or a number in [1, 100], got {self.anchor!r}")
        if not _number(self.hop_decay) or not 0.0 <= self.hop_decay <= 1.0:
            raise InvalidInputError(f"{where}: hop_decay must be a number in [0, 1], got {self.hop_decay!r}")
        if not _number(self.seed_threshold) or not -1.0 <= self.seed_threshold <= 1.0:
            raise InvalidInputError(f"{where}: seed_threshold must be a cosine in [-1, 1], got {self.seed_threshold!r}")


def _check_weights(where: str, field_name: str, weights: object) -> None:
    if not isinstance(weights, dict) or not weights:
        raise InvalidInputError(f"{where}: {field_name} must be a non-empty dict of {', '.join(SIGNALS)}")
    for signal, weight in weights.items():
        if signal not in SIGNALS:
            raise InvalidInputError(f"{where}: unknown signal {signal!r} in {field_name}; signals: {', '.join(SIGNALS)}")
        if not _number(weight) or weight < 0:
            raise InvalidInputError(f"{where}: weight of {signal!r} must be a finite number >= 0, got {weight!r}")
    if not any(weights.values()):
        raise InvalidInputError(f"{where}: every weight is 0, nothing would be ranked")


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


_HYBRID_WEIGHTS = {"vector": 1.0, "bm25": 1.0, "fulltext": 0.5, "seed": 0.5, "time": 0.5}
#: relations: chosen leave-one-dataset-out over the generated graphs, the hand-written personas and
#: PathQuestion-Large with MiniLM and bge-small (python -m benchmarks.retrieval.generalisation;
#: docs/benchmarks.md, "Generalisation"), with what a relation's embedding says among the rules
#: (schema.facts.NAME_LEFT_OUT): the fact cosine, BM25 over the fact text at half weight and the
#: path signal (a relation on the way between the question's seeds) at a quarter. Not chosen, or not
#: paying on the folds they were not chosen on: seed, fulltext, spread, hubness, the anchor,
#: relation_words_need_a_name, the type in place of the name; each kept the default below the plain
#: fact vector on some set and embedder
_RELATION_WEIGHTS = {"vector": 1.0, "bm25": 0.5, "path": 0.25}
HYBRID = SearchPreset("hybrid", _HYBRID_WEIGHTS, fusion="adaptive", context=0.25, neighbours=1, session=0.1, speaker=0.1, diversity=0.3,
                      relation_weights=_RELATION_WEIGHTS)
HYBRID_CONTEXT = replace(HYBRID, name="hybrid_context", neighbours_as="context")
HYBRID_RRF = SearchPreset("hybrid_rrf", {"vector": 1.0, "bm25": 1.0, "fulltext": 0.5, "seed": 0.5}, fusion="rrf")
VECTOR_ONLY = SearchPreset("vector", {"vector": 1.0})
BM25_ONLY = SearchPreset("bm25", {"bm25": 1.0})

PRESETS = {p.name: p for p in (HYBRID, HYBRID_CONTEXT, HYBRID_RRF, VECTOR_ONLY, BM25_ONLY)}


def get_preset(preset: str | SearchPreset | None) -> SearchPreset:
    if preset is None:
        return HYBRID
    if isinstance(preset, SearchPreset):
        return preset
    try:
        return PRESETS[preset]
    except KeyError:
        raise InvalidInputError(f"unknown search preset {preset!r}; choose one of {', '.join(PRESETS)}") from None
