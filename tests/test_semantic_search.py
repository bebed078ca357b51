"""Search quality with the real MiniLM ONNX model, on every store."""

from __future__ import annotations

import uuid

import pytest
from conftest import MODEL_DIR, TEST_DIMS
from helpers import llm_config

from graphmem import Memory
from graphmem.embeddings import OnnxEmbedder
from graphmem.testing import ScriptedLLMServer


@pytest.fixture(scope="module")
def minilm():
    embedder = OnnxEmbedder(MODEL_DIR)
    assert embedder.dims == TEST_DIMS, "GRAPHMEM_TEST_DIMS must match the MiniLM model (384)"
    return embedder


@pytest.fixture
def memory(store, minilm, tmp_path):
    with ScriptedLLMServer() as server:
        yield Memory({"llm": llm_config(server), "history_db_path": str(tmp_path / "h.db")}, store=store, embedder=minilm)


def _ids(result):
    return [r["memory"] for r in result["results"]]


def test_sports_question_finds_the_tennis_memory(memory):
    uid = f"u-{uuid.uuid4().hex[:8]}"
    memory.add(["I play tennis every weekend", "My sister lives in Paris", "I work as a nurse at the city hospital", "I am allergic to peanuts"], user_id=uid, infer=False)
    for preset in ("vector", "hybrid"):
        ranked = _ids(memory.search("which sports does the user play?", user_id=uid, preset=preset))
        assert ranked[0] == "I play tennis every weekend", preset
        assert ranked.index("I play tennis every weekend") < ranked.index("My sister lives in Paris")


def test_hybrid_puts_the_exact_name_first_where_vector_only_does_not(memory):
    uid = f"u-{uuid.uuid4().hex[:8]}"
    memory.add([
        "Quimby: 555-0192",
        "My dentist's phone number is on the clinic website",
        "Call the clinic to get the phone number of the dentist",
        "The dentist phone number changed last month",
        "Lost the dentist's phone number again",
    ], user_id=uid, infer=False)
    query = "what is the phone number of my dentist Quimby?"
    assert _ids(memory.search(query, user_id=uid, preset="vector"))[0] != "Quimby: 555-0192"
    assert _ids(memory.search(query, user_id=uid, preset="hybrid"))[0] == "Quimby: 555-0192"
