"""The user's own ontology (graph_store.ontology) on every store, through the scripted LLM server."""

from __future__ import annotations

import pytest
from conftest import TEST_DIMS
from helpers import llm_config, make_memory, triples

from graphmem import ConfigError, Memory
from graphmem.schema.ontology import Ontology

CLINIC = {
    "mode": "strict",
    "entity_types": {
        "Person": {"description": "a human being", "attributes": {"birthday": "date"}},
        "Medication": {"description": "a drug someone takes", "attributes": {"dose": "str", "per_day": "int"}},
    },
    "relation_types": {
        "TAKES": {"description": "a person takes a medication", "source": ["Person"], "target": ["Medication"]},
        "KNOWS": {"description": "two people know each other", "source": ["Person"], "target": ["Person"]},
    },
}


def clinic_memory(server, store, mode="strict", **config):
    ontology = {**CLINIC, "mode": mode}
    return make_memory(server, store, TEST_DIMS, graph_store={"ontology": ontology}, **config)


def entity(name, entity_type, **attributes):
    out = {"entity": name, "entity_type": entity_type}
    if attributes:
        out["attributes"] = attributes
    return out


def rel(source, relationship, destination):
    return {"source": source, "relationship": relationship, "destination": destination}


def extraction(server, entities, relations):
    server.enqueue("extract_entities", {"entities": entities})
    server.enqueue("establish_relationships", {"relations": relations})


def test_strict_mode_drops_off_ontology_types_and_relations(server, store, uid):
    m = clinic_memory(server, store)
    extraction(
        server,
        [entity("I", "Person"), entity("Aspirin", "medication"), entity("Paris", "place"), entity("Bob", "Person")],
        [rel("I", "takes", "Aspirin"), rel("I", "lives_in", "Paris"), rel("Aspirin", "knows", "Bob")],
    )
    result = m.add("I take aspirin, I live in Paris", user_id=uid)
    assert result["off_ontology"] == 2  # Paris (a place: lives_in then has no endpoint), knows from a Medication
    assert triples(m.get_all(user_id=uid)) == {(uid, "TAKES", "Aspirin")}
    names = {e.name: e.entity_type for e in m.store.entities(m_scope(uid))}
    assert names == {uid: "person", "Aspirin": "medication", "Bob": "person"}  # Paris (a place) dropped
    # the tools carried the ontology as enums, the prompt listed the types with their descriptions
    request = next(r for r in server.requests if "extract_entities" in r.tools)
    tools = {t["function"]["name"]: t["function"]["parameters"] for t in request.body["tools"]}
    item = tools["extract_entities"]["properties"]["entities"]["items"]["properties"]
    assert item["entity_type"]["enum"] == ["Person", "Medication"]
    assert set(item["attributes"]["properties"]) == {"birthday", "dose", "per_day"}
    rel_item = tools["establish_relationships"]["properties"]["relations"]["items"]["properties"]
    assert rel_item["relationship"]["enum"] == ["TAKES", "KNOWS"]
    system = request.messages[0]["content"]
    assert "Medication: a drug someone takes" in system and "TAKES [Person → Medication]" in system
    m.close()


def test_guided_mode_keeps_other_types(server, store, uid):
    m = clinic_memory(server, store, mode="guided")
    extraction(server, [entity("I", "person"), entity("Paris", "place")], [rel("I", "lives_in", "Paris")])
    m.add("I live in Paris", user_id=uid)
    assert triples(m.get_all(user_id=uid)) == {(uid, "LIVES_IN", "Paris")}
    m.close()


def test_attributes_are_validated_stored_and_returned(server, store, uid):
    m = clinic_memory(server, store)
    extraction(
        server,
        [
            entity("I", "Person", birthday="1984-02-29"),
            entity("Aspirin", "Medication", dose="100 mg", per_day="twice", colour="white", birthday="1990-01-01"),
        ],
        [rel("I", "takes", "Aspirin")],
    )
    m.add("I was born on 29 February 1984 and take 100 mg aspirin twice a day", user_id=uid)
    (found,) = m.get_all(user_id=uid)["relations"]
    assert found["source_attributes"] == {"birthday": "1984-02-29"}
    # per_day has the wrong type, colour is not declared, birthday is not a Medication attribute
    assert found["destination_attributes"] == {"dose": "100 mg"}
    assert found["destination_type"] == "medication"
    hits = m.search("aspirin", user_id=uid)["relations"]
    assert hits and hits[0]["destination_attributes"] == {"dose": "100 mg"}
    # a later add updates a value; a wrong-typed value never replaces a stored one
    extraction(server, [entity("Aspirin", "Medication", dose="50 mg"), entity("I", "Person", birthday="soon")], [])
    m.add("The aspirin dose is now 50 mg", user_id=uid)
    (found,) = m.get_all(user_id=uid)["relations"]
    assert found["destination_attributes"] == {"dose": "50 mg"}
    assert found["source_attributes"] == {"birthday": "1984-02-29"}
    attrs = {e.name: e.attributes for e in m.store.entities(m_scope(uid))}
    assert attrs["Aspirin"] == {"dose": "50 mg"}
    m.close()


def test_a_custom_prompt_still_gets_the_ontology(server, store, uid):
    custom = "You extract a clinic's graph for {{self_name}}. Be brief."
    m = make_memory(server, store, TEST_DIMS, graph_store={"ontology": CLINIC, "custom_prompt": custom})
    extraction(server, [entity("I", "Person"), entity("Ibuprofen", "Medication"), entity("Rome", "city")],
               [rel("I", "takes", "Ibuprofen"), rel("I", "visits", "Rome")])
    m.add("I take ibuprofen and visit Rome", user_id=uid)
    assert triples(m.get_all(user_id=uid)) == {(uid, "TAKES", "Ibuprofen")}
    request = next(r for r in server.requests if "extract_entities" in r.tools)
    system = request.messages[0]["content"]
    assert system.startswith(f"You extract a clinic's graph for {uid}.") and "Relation types" in system
    m.close()


def test_type_filters_on_search_and_get_all(server, store, uid):
    m = clinic_memory(server, store)
    extraction(server, [entity("I", "Person"), entity("Aspirin", "Medication"), entity("Bob", "Person")],
               [rel("I", "takes", "Aspirin"), rel("I", "knows", "Bob")])
    m.add("I take aspirin and know Bob", user_id=uid)
    assert triples(m.get_all(user_id=uid, relationship_types=["takes"])) == {(uid, "TAKES", "Aspirin")}
    assert triples(m.get_all(user_id=uid, entity_types=["Medication"])) == {(uid, "TAKES", "Aspirin")}
    got = m.search("what do I take and who do I know", user_id=uid, relationship_types=["KNOWS"])
    assert triples(got) == {(uid, "KNOWS", "Bob")}
    got = m.search("what do I take and who do I know", user_id=uid, entity_types=["medication"])
    assert triples(got) == {(uid, "TAKES", "Aspirin")}
    m.close()


@pytest.mark.parametrize(
    ("ontology", "problem"),
    [
        ({"entity_types": {"Person": {"attributes": {"birthday": "weekday"}}}}, "birthday"),
        ({"entity_types": {"Person": {}}, "relation_types": {"TAKES": {"target": ["Medication"]}}}, "'Medication' is not a declared"),
        ({"entity_types": {"Person": {}}, "relation_types": {"HAS-PET": {}}}, "'HAS-PET' cannot be a relationship type"),
        ({"entity_types": {"Person`) DETACH DELETE n //": {}}}, "not a usable name"),
        ({"entity_types": {"Memory": {}}}, "label graphmem uses itself"),
        ({"entity_types": {"Person": {"attributes": {"Bad Key": "str"}}}}, "'Bad Key'"),
        ({"mode": "sometimes"}, "mode"),
    ],
)
def test_an_invalid_ontology_is_a_config_error_naming_the_problem(server, tmp_path, ontology, problem):
    config = {"llm": llm_config(server), "graph_store": {"ontology": ontology, "config": {"path": str(tmp_path / "g")}},
              "embedder": {"provider": "hashing"}, "history_db_path": str(tmp_path / "h.db")}
    with pytest.raises(ConfigError, match="ontology") as info:
        Memory.from_config(config)
    assert problem in str(info.value)


def test_the_python_form_is_the_same_model():
    ontology = Ontology.model_validate(CLINIC)
    assert ontology.entity_type("medication") == "Medication"
    assert ontology.attributes("Medication", {"dose": 5, "per_day": "3"}) == ({"per_day": 3}, 1)
    assert ontology.attributes("Person", {"birthday": "29 Feb"}) == ({}, 1)


def m_scope(uid):
    from graphmem.types import Scope

    return Scope.of(user_id=uid)


def test_the_browser_style_colours_the_users_own_types(tmp_path):
    from graphmem.browser.style import labels_for, style_text, write_style

    ontology = Ontology.model_validate(CLINIC)
    text = style_text(ontology)
    assert "node.Medication {" in text and "node.Person {" in text and text.startswith(style_text()[:50])
    assert labels_for(ontology)["medication"] == "Medication"
    assert write_style(ontology, tmp_path).read_text() == text


def test_exports_carry_the_attributes(server, tmp_path, uid):
    from graphmem.lifecycle.export import read_graph, to_cypher, to_networkx
    from graphmem.stores.embedded import EmbeddedStore

    store = EmbeddedStore(tmp_path / "g", TEST_DIMS)
    m = clinic_memory(server, store)
    extraction(server, [entity("I", "Person"), entity("Aspirin", "Medication", dose="100 mg")], [rel("I", "takes", "Aspirin")])
    m.add("I take 100 mg aspirin", user_id=uid)
    exported = read_graph(store, m_scope(uid))
    nodes = dict(to_networkx(exported).nodes(data=True))
    assert any(n.get("attr_dose") == "100 mg" for n in nodes.values())
    assert "attr_dose: '100 mg'" in to_cypher(exported) or 'attr_dose: "100 mg"' in to_cypher(exported)
    m.close()
