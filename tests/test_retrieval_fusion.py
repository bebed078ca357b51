"""Fusion helpers of the retriever: score fusion and RRF."""

from __future__ import annotations

import re

import pytest

from graphmem.retrieval import HYBRID, HYBRID_RRF
from graphmem.retrieval.fusion import rrf, score_sum


def test_score_sum_keeps_margins_and_rrf_keeps_ranks():
    signals = {"vector": [0.9, 0.8, 0.1], "bm25": [10.0, 1.0, 0.0]}
    fused = score_sum(signals, {"vector": 1.0, "bm25": 1.0})
    assert fused == pytest.approx([2.0, 0.8 / 0.9 + 0.1, 0.1 / 0.9])
    ranked = rrf(signals, {"vector": 1.0, "bm25": 1.0}, k=60)
    assert ranked[0] == pytest.approx(2 / 61) and ranked[2] == pytest.approx(1 / 63)


def test_only_the_hybrid_preset_uses_context():
    assert HYBRID.context > 0 and HYBRID_RRF.context == 0


# --- SearchPreset checks its names: a typo fails loudly instead of ranking nothing ---------------


@pytest.mark.parametrize("kwargs, named", [
    ({"weights": {"vectr": 1.0}}, "'vectr'"),
    ({"weights": {"vector": 1.0, "BM25": 1.0}}, "'BM25'"),
    ({"weights": {"vector": -1.0}}, "'vector'"),
    ({"weights": {"vector": float("nan")}}, "'vector'"),
    ({"weights": {"vector": "1"}}, "'vector'"),
    ({"weights": {"vector": 0.0}}, "every weight is 0"),
    ({"weights": {}}, "weights"),
    ({"weights": {"vector": 1.0}, "fusion": "rff"}, "'rff'"),
    ({"weights": {"vector": 1.0}, "rrf_k": 0}, "rrf_k"),
    ({"weights": {"vector": 1.0}, "seed_top_k": 0}, "seed_top_k"),
    ({"weights": {"vector": 1.0}, "context": -0.5}, "context"),
    ({"weights": {"vector": 1.0}, "seed_threshold": 2}, "seed_threshold"),
])
def test_search_preset_names_its_mistake(kwargs, named):
    from graphmem import InvalidInputError, SearchPreset

    with pytest.raises(InvalidInputError, match=re.escape(named)):
        SearchPreset("mine", **kwargs)


def test_named_presets_are_valid_and_a_custom_one_works():
    from graphmem.retrieval import PRESETS, SearchPreset
    from graphmem.retrieval.presets import FUSIONS, SIGNALS

    assert set(SIGNALS) == {"vector", "bm25", "fulltext", "seed", "time", "path"} and set(FUSIONS) == {"score", "rrf", "adaptive"}
    for preset in PRESETS.values():
        assert set(preset.weights) <= set(SIGNALS) and preset.fusion in FUSIONS
    assert SearchPreset("mine", {"bm25": 2.0, "seed": 0.0}, fusion="rrf").weights["bm25"] == 2.0


# --- the fusion contract shared with relation ranking (FUSION.md) ---------------------------------


def _order(fused):
    return sorted(range(len(fused)), key=lambda i: -fused[i])


@pytest.mark.parametrize("method", ["adaptive", "score", "rrf"])
def test_unknown_signals_pass_through_with_their_weight_and_flat_ones_change_nothing(method):
    from graphmem.retrieval.fusion import fuse

    signals = {"vector": [0.62, 0.55, 0.41, 0.30], "bm25": [0.0, 7.0, 2.0, 0.0]}
    weights = {"vector": 1.0, "bm25": 1.0, "seed": 0.5, "path": 0.5}
    base = _order(fuse(signals, weights, method))
    for flat in ([0.0] * 4, [0.7] * 4):  # a zero or flat signal (relation seeds all alike) never reorders
        assert _order(fuse({**signals, "path": flat}, weights, method)) == base
    # a signal the preset does not weigh contributes nothing, whatever its scores
    assert _order(fuse({**signals, "other": [0.0, 0.0, 0.0, 9.0]}, weights, method)) == base
    # a weighed one that separates the candidates counts with its weight: it decides a near tie
    near = {"vector": [0.60, 0.60, 0.2, 0.1], "bm25": [0.0, 0.0, 0.0, 0.0]}
    with_seed = fuse({**near, "seed": [0.0, 0.9, 0.0, 0.0]}, weights, method)
    assert _order(with_seed)[0] == 1
    heavier = fuse({**near, "seed": [0.0, 0.9, 0.0, 0.0]}, {**weights, "seed": 2.0}, method)
    assert heavier[1] - heavier[0] > with_seed[1] - with_seed[0]
