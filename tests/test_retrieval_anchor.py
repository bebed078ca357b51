"""The anchor (retrieval.fusion.keep_anchor): the vector signal's own best stay near the top of the
default ranking whatever the other signals say, in both halves; and the selective rule (a signal
every candidate carries counts as far as it tells them apart), now a preset setting."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from graphmem.errors import InvalidInputError
from graphmem.retrieval import HYBRID, SearchPreset
from graphmem.retrieval.fusion import fuse, keep_anchor
from graphmem.retrieval.graph import rank_relations
from graphmem.retrieval.memories import anchored
from graphmem.types import MemoryItem, Relation


def test_each_anchor_item_is_placed_by_its_deadline_and_the_rest_keeps_the_fused_order():
    fused = [f"f{i}" for i in range(10)]
    anchor = ["a1", "a2", "f9", "a3"]
    out = keep_anchor(fused, anchor, 2.0, 10)
    for rank, item in enumerate(anchor, start=1):
        assert out.index(item) + 1 <= math.ceil(2.0 * rank)
    rest = [i for i in out if i not in anchor]
    assert rest == [f for f in fused if f in rest]
    assert len(out) == 10 and len(set(out)) == 10


def test_when_the_fusion_agrees_with_the_anchor_nothing_moves():
    fused = ["a", "b", "c", "d", "e"]
    assert keep_anchor(fused, ["b", "a", "c"], 2.0, 5) == fused
    assert keep_anchor(fused, ["e", "d"], 0.0, 3) == ["a", "b", "c"]


def _rel(rid: str, dest: str, vector: float, text: str) -> Relation:
    return Relation(rid, "id-alice", "alice", "LIKES", f"id-{dest}", dest, scores={"vector": vector, "seed": 1.0, "fulltext": 0.0},
                    fact=text, created_at=None)


def test_relations_the_meanings_best_is_kept_when_the_words_bury_it():
    # the words of the question ("green tea") are in four facts that mean little to it; the one fact
    # that means it shares none of them
    rels = [_rel(f"w{i}", f"Green Tea Shop {i}", 0.10, f"I myself likes Green Tea Shop {i} green tea green") for i in range(4)]
    rels += [_rel(f"n{i}", f"thing {i}", 0.05 + i / 100, f"I myself likes thing {i}") for i in range(6)]
    rels.append(_rel("gold", "matcha", 0.60, "I myself likes matcha (beverage)"))
    preset = replace(HYBRID, relation_weights={"vector": 1.0, "bm25": 8.0}, fusion="score", relation_spread=0.0, anchor=0.0,
                     relation_words_need_a_name=False)
    buried = [r.id for r in rank_relations(list(rels), "which green tea do I drink?", preset, 3, "alice")]
    assert "gold" not in buried
    kept = rank_relations(list(rels), "which green tea do I drink?", replace(preset, anchor=1.0), 3, "alice")
    assert kept[0].id == "gold" and kept[0].scores["anchored"] == 1.0
    assert [r.id for r in kept[1:]] == buried[:2]


def test_memories_the_meanings_best_is_kept_and_says_so():
    items = {f"m{i}": MemoryItem(f"m{i}", f"text {i}", "h", scores={"vector": 0.1}) for i in range(5)}
    items["gold"] = MemoryItem("gold", "the answer", "h", scores={"vector": 0.9})
    ranked = [items[f"m{i}"] for i in range(5)]
    out = anchored(ranked, items, 2.0, 5)
    assert [m.id for m in out][:2] == ["m0", "gold"] and out[1].scores["anchored"] == 1.0
    assert anchored(ranked, items, 0.0, 5) == ranked


def test_a_signal_every_candidate_carries_counts_only_as_far_as_it_is_selective():
    signals = {"vector": [0.2, 0.6, 0.4], "seed": [1.0, 1.0, 0.9]}
    plain = fuse(signals, {"vector": 1.0, "seed": 1.0}, "adaptive", selective=())
    selective = fuse(signals, {"vector": 1.0, "seed": 1.0}, "adaptive", selective=("seed",))
    assert plain[0] > selective[0] and selective == pytest.approx([0.2 / 0.6, 1.0, 0.4 / 0.6])  # every candidate carries it: weight 0


@pytest.mark.parametrize("bad", [{"anchor": 0.5}, {"anchor": -1}, {"anchor": float("nan")}, {"selective": ("tiem",)}, {"selective": ["time"]}])
def test_the_new_settings_are_checked(bad):
    with pytest.raises(InvalidInputError):
        SearchPreset("x", {"vector": 1.0}, **bad)
