"""Issue 24: coverage over redundancy (graphmem.retrieval.coverage): question decomposition without an
LLM, interleaving of the part rankings, MMR over the fused head; as functions and end to end through
Memory.search on the embedded store with real MiniLM embeddings."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from conftest import MODEL_DIR
from helpers import llm_config

from graphmem import InvalidInputError, Memory, SearchPreset
from graphmem.embeddings import OnnxEmbedder
from graphmem.retrieval import HYBRID
from graphmem.retrieval.coverage import interleave, mmr, question_parts
from graphmem.stores.embedded import EmbeddedStore
from graphmem.testing import ScriptedLLMServer


def test_a_coordinated_pair_gives_one_part_per_side_each_with_the_rest_of_the_question():
    assert question_parts("Where did Jon and Gina both travel?") == ["Where did Jon travel?", "Where did Gina travel?"]
    assert question_parts("What has Mel done with her family or friends?") == [
        "What has Mel done with her family?", "What has Mel done with her friends?"]


def test_several_names_give_one_part_per_name_and_single_questions_stay_whole():
    assert question_parts("Did Caroline meet Melanie at the park?") == [
        "Caroline Did meet at the park", "Melanie Did meet at the park"]
    assert question_parts("When did Caroline go to the LGBTQ support group?") == []  # one name; an acronym is a topic
    assert question_parts("What fields would Caroline pursue?") == []
    assert question_parts("what is this and that?") == []  # both sides are stop words: nothing to split
    assert question_parts("What are the dance studio and the store?") == ["What are the dance studio", "the store?"]


def test_interleave_takes_each_ranking_in_turn_and_each_id_once():
    assert interleave([["a", "b", "c"], ["d", "a", "e"], ["f"]]) == ["a", "d", "f", "b", "e", "c"]
    # a part whose best is already taken gives its next best in the same round
    assert interleave([["a", "b", "c"], ["a", "c"]]) == ["a", "c", "b"]
    assert interleave([]) == []


def test_mmr_lets_a_different_text_pass_near_copies_of_the_first():
    ids = ["a1", "a2", "a3", "b"]
    texts = ["pottery class on Sunday", "pottery class Sunday again", "the pottery class on Sunday", "camping trip in the mountains"]
    scores = [1.0, 0.95, 0.9, 0.7]
    assert mmr(ids, scores, texts, limit=4, diversity=0.0) == ids
    picked = mmr(ids, scores, texts, limit=2, diversity=0.5)
    assert picked[:2] == ["a1", "b"]
    assert sorted(picked) == sorted(ids)  # nothing dropped: the rest follow in their order
    assert picked[2:] == ["a2", "a3"]
    # a little diversity does not move a clearly better near-copy
    assert mmr(ids, scores, texts, limit=4, diversity=0.05)[:2] == ["a1", "a2"]


def test_coverage_settings_are_checked():
    with pytest.raises(InvalidInputError, match="diversity"):
        SearchPreset("mine", {"vector": 1.0}, diversity=1.5)
    with pytest.raises(InvalidInputError, match="decompose"):
        SearchPreset("mine", {"vector": 1.0}, decompose="yes")  # type: ignore[arg-type]
    assert HYBRID.diversity == 0.3 and HYBRID.decompose is False  # MMR on by default, decomposition off (docs/retrieval.md)


LINES = [
    "Jon: I opened my dance studio downtown last month.",
    "Jon: The dance studio downtown now has twelve students.",
    "Jon: My dance studio downtown is painted blue.",
    "Jon: Dance studio downtown classes run every evening.",
    "Gina: I launched an online clothing store for my brand.",
    "Gina: Weather was rainy all week.",
]


@pytest.fixture(scope="module")
def chat(tmp_path_factory):
    embedder = OnnxEmbedder(MODEL_DIR)
    store = EmbeddedStore(tmp_path_factory.mktemp("store"), embedding_dims=embedder.dims)
    start = datetime(2023, 5, 1, 10, tzinfo=timezone.utc)
    with ScriptedLLMServer() as server:
        memory = Memory({"llm": llm_config(server), "history_db_path": str(tmp_path_factory.mktemp("h") / "h.db"),
                         "context": {"summary_every": 0}}, store=store, embedder=embedder)
        for n, line in enumerate(LINES):
            memory.add(line, user_id="jg", infer=False, timestamp=start + timedelta(days=n * 3))
        yield memory
        assert not server.requests
        memory.close()


def _texts(memory: Memory, question: str, preset: SearchPreset, limit: int) -> list[str]:
    return [r["memory"] for r in memory.search(question, user_id="jg", limit=limit, preset=preset)["results"]]


def test_decomposition_brings_the_second_part_into_a_short_head(chat):
    """Jon's studio fills four turns and the question's words; Gina's store is one turn. Without
    decomposition the head of three is three studio turns; with it, the part about the store gets
    its best turn in, and the whole question's best hit still leads."""
    question = "What are the dance studio downtown and the store?"
    plain = SearchPreset("plain", {"vector": 1.0, "bm25": 1.0})
    parts = SearchPreset("parts", {"vector": 1.0, "bm25": 1.0}, decompose=True)
    before, after = _texts(chat, question, plain, 3), _texts(chat, question, parts, 3)
    assert all("studio" in t for t in before), before
    assert after[0] == before[0] and any("clothing store" in t for t in after), after


def test_mmr_search_keeps_the_best_hit_and_spreads_the_rest(chat):
    question = "Where is the dance studio downtown and what does Gina sell?"
    plain = SearchPreset("plain", {"vector": 1.0, "bm25": 1.0})
    diverse = SearchPreset("diverse", {"vector": 1.0, "bm25": 1.0}, diversity=0.5)
    before, after = _texts(chat, question, plain, 3), _texts(chat, question, diverse, 3)
    assert all("studio" in t for t in before), before
    assert after[0] == before[0] and any("clothing store" in t for t in after), after
