"""Issue 24: BM25's length normalisation for conversation messages (SearchPreset.bm25_b, 0.5 by
default): a long message that tells the answer in one clause is not outranked by a short turn that
only echoes the question's words. As a function, and end to end through Memory.search on the
embedded store."""

from __future__ import annotations

from dataclasses import replace

import pytest
from conftest import MODEL_DIR
from helpers import llm_config

from graphmem import InvalidInputError, Memory, SearchPreset
from graphmem.embeddings import OnnxEmbedder
from graphmem.retrieval import BM25_ONLY, HYBRID
from graphmem.retrieval.text import BM25
from graphmem.stores.embedded import EmbeddedStore
from graphmem.testing import ScriptedLLMServer

QUESTION = "Which pottery class did Melanie sign up for?"
ECHO = "Caroline: Melanie, pottery class?"
ANSWER = ("Melanie: I signed up for the Tuesday pottery class, after a long week with the kids it feels like "
          "therapy, a way to express myself and get creative, and the teacher says my bowls are getting better "
          "every single week, even the ones that crack in the kiln or come out of the glaze a funny colour")
OTHERS = [
    "Caroline: I went to the pride parade last weekend with friends.",
    "Melanie: The kids loved the beach trip and built a sandcastle.",
    "Caroline: My mentor gave me good advice about the adoption agency.",
    "Caroline: Thanks, Melanie! See you soon.",
]


def test_less_length_normalisation_lets_the_long_answer_pass_the_short_echo():
    """The answer matches more of the question's words, once each, in a long message; the echo
    matches two of them in five words. At 0.75 (the web-search habit) the echo wins; at 0.5 the
    answer does; at 0 length does not count at all."""
    docs = [ECHO, ANSWER, *OTHERS]
    echo, answer = BM25(docs, b=0.75).scores(QUESTION)[:2]
    assert echo > answer
    echo, answer = BM25(docs, b=0.5).scores(QUESTION)[:2]
    assert answer > echo
    flat = BM25(["pottery", "pottery " + " ".join(["word"] * 40), "other"], b=0.0).scores("pottery")
    assert flat[0] == pytest.approx(flat[1])


def test_bm25_b_is_checked_and_defaults_to_half():
    assert HYBRID.bm25_b == BM25_ONLY.bm25_b == SearchPreset("mine", {"bm25": 1.0}).bm25_b == 0.5
    for bad in (1.5, -0.1, float("nan"), "0.5", True):
        with pytest.raises(InvalidInputError, match="bm25_b"):
            SearchPreset("mine", {"bm25": 1.0}, bm25_b=bad)  # type: ignore[arg-type]


def test_search_uses_the_presets_length_normalisation(tmp_path):
    embedder = OnnxEmbedder(MODEL_DIR)
    with ScriptedLLMServer() as server:
        memory = Memory({"llm": llm_config(server), "history_db_path": str(tmp_path / "h.db"), "context": {"summary_every": 0}},
                        store=EmbeddedStore(tmp_path / "store", embedding_dims=embedder.dims), embedder=embedder)
        try:
            for text in (ECHO, ANSWER, *OTHERS):
                memory.add(text, user_id="mel", infer=False)

            def first(preset: SearchPreset) -> str:
                return str(memory.search(QUESTION, user_id="mel", limit=3, preset=preset)["results"][0]["memory"])

            assert first(BM25_ONLY) == ANSWER
            assert first(replace(BM25_ONLY, name="web", bm25_b=0.75)) == ECHO
            assert not server.requests  # infer=False and search: no model call
        finally:
            memory.close()
