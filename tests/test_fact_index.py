"""The embedded store's fact index (stores/embedded/facts.py): its time mask is THE time filter
(stores.base.relation_visible) for every combination of open and set times, as_of and known_at."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from itertools import product

from graphmem.stores.base import relation_visible
from graphmem.stores.embedded.facts import FactIndexes

T = datetime(2024, 1, 1, tzinfo=timezone.utc)
TIMES = [None, T, T + timedelta(days=10), T + timedelta(days=20)]


def test_the_time_mask_is_relation_visible_for_every_case() -> None:
    rels = [{"id": f"r{i}", "source_id": "a", "destination_id": "b", "valid_at": v, "invalid_at": iv, "created_at": c, "expired_at": x}
            for i, (v, iv, c, x) in enumerate(product(TIMES, TIMES, TIMES[1:], TIMES))]
    index = FactIndexes(4).get("scope", lambda: rels)
    now = T + timedelta(days=15)
    probes = [None, T - timedelta(days=1), T, T + timedelta(days=5), T + timedelta(days=10), T + timedelta(days=25)]
    for as_of, known_at in product(probes, probes):
        mask = index.visible(as_of, known_at, now)
        want = [relation_visible(r["valid_at"], r["invalid_at"], r["created_at"], r["expired_at"], as_of, known_at, now) for r in rels]
        assert mask.tolist() == want, (as_of, known_at)
    assert index.by_entity["a"].tolist() == list(range(len(rels))) and not index.has_fact.any()
