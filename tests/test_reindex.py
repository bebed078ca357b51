"""``graphmem reindex`` and ``graphmem load`` fill relation facts for data written before facts, on
every store; an export carries facts and provenance, a load re-embeds them."""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timezone

import pytest
from conftest import TEST_DIMS

from graphmem.cli.main import main
from graphmem.embeddings import HashingEmbedder
from graphmem.lifecycle.export import read_graph, retarget, to_json
from graphmem.lifecycle.load import load_graph, read_export
from graphmem.lifecycle.reindex import reindex
from graphmem.stores.base import GraphQuery, GraphStore, RelationFact
from graphmem.types import EntityWrite, GraphWrite, Invalidation, RelationWrite, Scope, new_id

UTC = timezone.utc
SAID = datetime(2023, 3, 1, tzinfo=UTC)  # the time the old add stated
WRITTEN = datetime(2024, 1, 10, tzinfo=UTC)


def old_style_graph(store: GraphStore, uid: str) -> Scope:
    """A scope as a store written before facts holds it: relations without facts, one retired."""
    scope, emb = Scope.of(user_id=uid), HashingEmbedder(dims=TEST_DIMS)
    me, boston, denver = (EntityWrite(new_id(), n, n.casefold(), t, emb.embed([n])[0], True)
                          for n, t in ((uid, "person"), ("Boston", "city"), ("Denver", "city")))
    old = RelationWrite(me.id, "LIVES_IN", boston.id, valid_at=SAID)
    store.write(GraphWrite("add-1", scope, WRITTEN, [me, boston], [old]))
    store.write(GraphWrite("add-2", scope, datetime(2024, 6, 1, tzinfo=UTC), [EntityWrite(me.id, uid, uid, "person", me.embedding, False), denver],
                           [RelationWrite(me.id, "LIVES_IN", denver.id, valid_at=datetime(2024, 6, 1, tzinfo=UTC))],
                           [Invalidation(old.id, datetime(2024, 6, 1, tzinfo=UTC))]))
    return scope


def test_reindex_fills_every_version_once_and_search_finds_them_by_meaning(store: GraphStore, uid: str) -> None:
    scope = old_style_graph(store, uid)
    assert all(r.fact is None for r in store.get_all(scope, include_invalidated=True))
    embedder = HashingEmbedder(dims=TEST_DIMS)
    report = reindex(store, embedder, [scope], batch=1)
    assert (report.relations, report.facts, report.embedding_requests) == (2, 2, 2)
    facts = {r.destination: r.fact for r in store.get_all(scope, include_invalidated=True)}
    assert facts == {"Boston": "I myself live in Boston (city) (since 1 March 2023)", "Denver": "I myself live in Denver (city)"}
    # the embedding is of the fact as it reads (schema.facts.fact_meaning), the time kept
    (vec,) = embedder.embed(["I myself live in Boston (city) (since 1 March 2023)"])
    (hit,) = store.search_graph(scope, GraphQuery(vec, "", [], top_k=0, include_invalidated=True, fact_top_k=1))
    assert hit.destination == "Boston" and hit.scores["vector"] == pytest.approx(1.0, abs=1e-3)
    assert reindex(store, embedder, [scope]).facts == 0  # nothing missing any more
    assert reindex(store, embedder, [scope], everything=True).facts == 2
    assert scope in store.scopes()


def test_an_export_carries_facts_and_provenance_and_a_load_embeds_them(store: GraphStore, uid: str, tmp_path) -> None:
    from graphmem import Memory

    scope = old_style_graph(store, uid)
    reindex(store, HashingEmbedder(dims=TEST_DIMS), [scope])
    target = Scope.of(user_id=f"copy-{uuid.uuid4().hex[:8]}")
    doc = json.loads(to_json(read_graph(store, scope, include_invalidated=True)))
    assert {r["destination"]: (r["fact"], r["provenance"], r["retired_by"]) for r in doc["relations"]} == {
        "Boston": ("I myself live in Boston (city) (since 1 March 2023)", ["add-1"], "add-2"),
        "Denver": ("I myself live in Denver (city)", ["add-2"], None),
    }
    for r in doc["relations"]:  # an export made before facts
        del r["fact"]
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    with Memory({"history_db_path": str(tmp_path / "h.db")}, store=store, embedder=HashingEmbedder(dims=TEST_DIMS)) as memory:
        load_graph(memory, retarget(read_export(path), target))
        copied = {r.destination: r for r in memory.store.get_all(target, include_invalidated=True)}
        who = target.self_name
        assert copied["Boston"].fact == "I myself live in Boston (city) (since 1 March 2023)"
        assert copied["Boston"].provenance == ["add-1"] and copied["Boston"].retired_by == "add-2"
        (vec,) = HashingEmbedder(dims=TEST_DIMS).embed(["I myself live in Denver (city)"])  # Denver's fact_meaning
        assert [r.destination for r in store.search_graph(target, GraphQuery(vec, "", [], top_k=0, fact_top_k=1))] == ["Denver"]
        memory.delete_all(user_id=who)


def test_cli_reindex_reports_what_it_filled(tmp_path, capsys) -> None:
    from graphmem.stores.embedded import EmbeddedStore

    path = tmp_path / "graph"
    with EmbeddedStore(path, TEST_DIMS) as store:
        old_style_graph(store, "ann")
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"embedder": {"provider": "hashing", "config": {"dims": TEST_DIMS}},
                                  "graph_store": {"provider": "embedded", "config": {"path": str(path)}},
                                  "history_db_path": str(tmp_path / "h.db")}), encoding="utf-8")
    assert main(["reindex", "--json", "--config", str(config)]) == 0
    assert json.loads(capsys.readouterr().out) == {"scopes": 1, "relations": 2, "facts": 2, "embedding_requests": 1}
    assert main(["reindex", "--user", "ann", "--config", str(config)]) == 0
    assert capsys.readouterr().out.strip() == "scopes: 1, relations: 2, facts: 0, embedding_requests: 0"


def test_facts_in_an_earlier_wording_stay_until_reindex_all_writes_them_in_the_first_person(store: GraphStore, uid: str) -> None:
    # a store written before the user's own node was worded "I myself": its facts name the user
    scope = old_style_graph(store, uid)
    embedder = HashingEmbedder(dims=TEST_DIMS)
    versions = store.get_all(scope, include_invalidated=True)
    named = [f"{uid} lives in {r.destination} (city)" for r in versions]
    store.set_relation_facts(scope, [RelationFact(r.id, r.source_id, f, v) for r, f, v in zip(versions, named, embedder.embed(named), strict=True)])
    assert reindex(store, embedder, [scope]).facts == 0  # every version has a fact: a plain reindex keeps them
    assert {r.fact for r in store.get_all(scope, include_invalidated=True)} == set(named)
    assert reindex(store, embedder, [scope], everything=True).facts == 2
    facts = {r.destination: r.fact for r in store.get_all(scope, include_invalidated=True)}
    assert facts == {"Boston": "I myself live in Boston (city) (since 1 March 2023)", "Denver": "I myself live in Denver (city)"}
    (vec,) = embedder.embed(["I myself live in Denver (city)"])  # the embedding is rewritten with the text (its fact_meaning)
    (hit,) = store.search_graph(scope, GraphQuery(vec, "", [], top_k=0, fact_top_k=1))
    assert hit.destination == "Denver" and hit.scores["vector"] == pytest.approx(1.0, abs=1e-3)
