"""graphmem's pytest plugin (registered through the ``pytest11`` entry point on install): the
``fake_model`` fixture, a started :class:`graphmem.testing.FakeModel`, stopped after the test.

    def test_my_agent_remembers(fake_model, tmp_path):
        fake_model.when("I moved to Denver", facts=["Lives in Denver"])
        memory = Memory(fake_model.config(store_path=tmp_path / "graph", history_db_path=tmp_path / "h.db"))
        ...

Without the entry point (e.g. graphmem on sys.path only), load it with
``pytest_plugins = ["graphmem.testing.pytest_plugin"]`` in a conftest.py.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from graphmem.testing.fake import FakeModel


@pytest.fixture
def fake_model() -> Iterator[FakeModel]:
    """A fake OpenAI-compatible model (chat + embeddings) on 127.0.0.1, fresh for each test."""
    with FakeModel() as fake:
        yield fake
