"""The default search's prior for the user's own words (retrieval.memories.speaker_prior): among
candidates of several roles, what the user said (and the facts extracted from it) gains a little;
a store of one role ranks as without it."""

from __future__ import annotations

import uuid
from dataclasses import replace

import pytest
from conftest import TEST_DIMS
from helpers import make_memory

from graphmem import InvalidInputError, SearchPreset
from graphmem.retrieval import HYBRID
from graphmem.retrieval.memories import speaker_prior
from graphmem.testing import ScriptedLLMServer
from graphmem.types import MemoryItem


def _item(i: int, role: str | None) -> MemoryItem:
    return MemoryItem(id=str(i), text=f"t{i}", hash=str(i), role=role)


def test_the_prior_goes_to_the_users_words_only_among_several_roles():
    pool = {str(i): _item(i, role) for i, role in enumerate(["user", "assistant", "user", "system"])}
    assert speaker_prior(pool, 0.1) == {"0": 0.1, "1": 0.0, "2": 0.1, "3": 0.0}
    # one speaker (facts only, or a conversation stored as the user's): nothing changes
    assert speaker_prior({k: v for k, v in pool.items() if v.role == "user"}, 0.1) == {}
    assert speaker_prior({"1": pool["1"], "3": pool["3"]}, 0.1) == {}
    assert speaker_prior(pool, 0.0) == {}
    # no role recorded (a fact imported from elsewhere) is the user's: not a second speaker, and
    # beside the assistant's words it counts as the user's
    unknown = _item(9, None)
    assert speaker_prior({"0": pool["0"], "9": unknown}, 0.1) == {}
    assert speaker_prior({"1": pool["1"], "9": unknown}, 0.1) == {"1": 0.0, "9": 0.1}


def test_the_speaker_weight_is_checked():
    with pytest.raises(InvalidInputError, match="speaker"):
        SearchPreset("mine", {"vector": 1.0}, speaker=-0.5)
    with pytest.raises(InvalidInputError, match="speaker"):
        SearchPreset("mine", {"vector": 1.0}, speaker=float("nan"))
    assert HYBRID.speaker > 0


def test_the_user_saying_it_outranks_the_assistant_repeating_it(store, tmp_path):
    """The same words said by both, on every store: the user's turn first by default (the
    assistant's, said later, wins the tie without the prior: newer first), and the hit carries its
    ``speaker`` score."""
    user = f"speaker-{uuid.uuid4().hex[:8]}"
    with ScriptedLLMServer() as server:
        memory = make_memory(server, store, TEST_DIMS, history_db_path=str(tmp_path / "history.db"), context={"summary_every": 0})
        try:
            words = "the deploy script is tools/ship.sh and it needs the staging key"
            memory.add([{"role": "user", "content": words}], user_id=user, infer=False, timestamp="2024-05-01T10:00:00Z")
            memory.add([{"role": "assistant", "content": words}], user_id=user, infer=False, timestamp="2024-05-01T10:01:00Z")
            memory.add([{"role": "user", "content": "lunch was a sandwich by the river"}], user_id=user, infer=False,
                       timestamp="2024-05-02T12:00:00Z")
            found = memory.search("which script deploys?", user_id=user, limit=3)["results"]
            assert [r["role"] for r in found[:2]] == ["user", "assistant"]
            assert found[0]["scores"]["speaker"] == pytest.approx(HYBRID.speaker)
            assert found[1]["scores"]["speaker"] == 0.0
            plain = memory.search("which script deploys?", user_id=user, limit=3,
                                  preset=replace(HYBRID, name="no_speaker", speaker=0.0))["results"]
            assert [r["role"] for r in plain[:2]] == ["assistant", "user"]
            assert "speaker" not in plain[0]["scores"]
        finally:
            memory.delete_all(user_id=user)
            memory.close()
