"""``graphmem serve`` as a real uvicorn process on 127.0.0.1, driven with httpx: mem0's routes on
both stores, tenant keys bound to scopes, and bad input (always a JSON 4xx, nothing written)."""

from __future__ import annotations

import json
import uuid

import httpx
import pytest
from servers import free_port, graphmem_command, running, write_config

from graphmem.server.access import hash_key
from graphmem.testing import ScriptedLLMServer

ALICE_KEY, ACME_KEY, ADMIN_KEY = "key-alice-" + uuid.uuid4().hex, "key-acme-" + uuid.uuid4().hex, "key-admin-" + uuid.uuid4().hex


@pytest.fixture(scope="module")
def llm():
    with ScriptedLLMServer() as s:
        yield s


def _keys_file(folder) -> str:
    keys = {"keys": [
        {"name": "alice-app", "sha256": hash_key(ALICE_KEY), "users": ["alice"]},
        {"name": "acme", "sha256": hash_key(ACME_KEY), "user_prefixes": ["acme:"]},
        {"name": "ops", "sha256": hash_key(ADMIN_KEY), "admin": True},
    ]}
    path = folder / "keys.json"
    path.write_text(json.dumps(keys))
    return str(path)


def _start(request, tmp_path_factory, llm, store: str):
    folder = tmp_path_factory.mktemp(f"rest-{store}")
    uri = request.getfixturevalue("neo4j_uri") if store == "neo4j" else None
    config = write_config(folder, llm.base_url, store, uri)
    port = free_port()
    args = graphmem_command("serve", "--config", str(config), "--keys", _keys_file(folder), "--port", str(port),
                            "--max-body-bytes", "20000")
    return running(args, f"http://127.0.0.1:{port}/openapi.json", folder / "server.log"), f"http://127.0.0.1:{port}", folder


@pytest.fixture(scope="module", params=["embedded", pytest.param("neo4j", marks=pytest.mark.neo4j)])
def rest(request, tmp_path_factory, llm):
    ctx, url, folder = _start(request, tmp_path_factory, llm, request.param)
    with ctx:
        yield url, folder


@pytest.fixture(scope="module")
def rest_embedded(request, tmp_path_factory, llm):
    ctx, url, folder = _start(request, tmp_path_factory, llm, "embedded")
    with ctx:
        yield url, folder


def _client(url: str, key: str | None) -> httpx.Client:
    headers = {"Authorization": f"Token {key}"} if key else {}
    return httpx.Client(base_url=url, headers=headers, timeout=30)


def test_mem0_routes_round_trip(rest, llm):
    url, _ = rest
    user = "acme:" + uuid.uuid4().hex[:8]
    llm.enqueue("extract_facts", {"facts": ["Lives in Lisbon", "Works at Acme"]})
    llm.enqueue("extract_entities", {"entities": [{"entity": "I", "entity_type": "person"}, {"entity": "Lisbon", "entity_type": "city"}]})
    llm.enqueue("establish_relationships", {"relations": [{"source": "I", "relationship": "lives_in", "destination": "Lisbon"}]})
    with _client(url, ACME_KEY) as c:
        added = c.post("/memories", json={"messages": [{"role": "user", "content": "I live in Lisbon and work at Acme"}],
                                          "user_id": user, "metadata": {"source": "chat"}})
        assert added.status_code == 200, added.text
        assert sorted(r["memory"] for r in added.json()["results"]) == ["Lives in Lisbon", "Works at Acme"]
        assert [(r["relationship"], r["destination"]) for r in added.json()["relations"]] == [("LIVES_IN", "Lisbon")]

        listed = c.get("/memories", params={"user_id": user}).json()
        assert len(listed["results"]) == 2 and len(listed["relations"]) == 1
        found = c.post("/search", json={"query": "Lisbon", "user_id": user, "limit": 1}).json()
        assert found["results"][0]["memory"] == "Lives in Lisbon"
        mem_id = found["results"][0]["id"]
        assert c.get(f"/memories/{mem_id}").json()["memory"] == "Lives in Lisbon"
        assert c.put(f"/memories/{mem_id}", json={"text": "Lives in Porto"}).json()["memory"] == "Lives in Porto"
        assert [e["event"] for e in c.get(f"/memories/{mem_id}/history").json()] == ["ADD", "UPDATE"]
        timeline = c.get("/timeline", params={"entity": "Lisbon", "user_id": user}).json()
        assert [r["relationship"] for r in timeline["relations"]] == ["LIVES_IN"]
        add_id = timeline["relations"][0]["provenance"]["added_by"][0]
        why = c.get(f"/provenance/{add_id}", params={"user_id": user}).json()
        assert [m["content"] for m in why["messages"]] == ["I live in Lisbon and work at Acme"]
        assert sorted(e["new_memory"] for e in why["memories"]) == ["Lives in Lisbon", "Works at Acme"]
        assert [r["destination"] for r in why["relations"]["asserted"]] == ["Lisbon"]
        hood = c.get("/graph", params={"entity": "Lisbon", "user_id": user}).json()
        assert [r["destination"] for r in hood["relations"]] == ["Lisbon"]
        assert c.get("/graph", params={"entity": "Lisbon", "user_id": user, "as_of": "2000-01-01"}).json()["relations"] == []
        assert c.delete(f"/memories/{mem_id}").status_code == 200
        assert c.get(f"/memories/{mem_id}").status_code == 404
        assert c.delete("/memories", params={"user_id": user}).json()["deleted_entities"] == 2
        assert c.get("/memories", params={"user_id": user}).json()["relations"] == []


def test_keys_are_bound_to_their_scopes(rest_embedded, llm):
    url, folder = rest_embedded
    with _client(url, ADMIN_KEY) as admin:
        bob = admin.post("/memories", json={"messages": [{"role": "user", "content": "bob's secret"}], "user_id": "bob",
                                            "infer": False}).json()["results"][0]["id"]
    with _client(url, None) as anonymous:
        assert anonymous.get("/memories", params={"user_id": "alice"}).status_code == 401
    with _client(url, "not-a-key") as wrong:
        assert wrong.post("/search", json={"query": "x", "user_id": "alice"}).status_code == 401
    with _client(url, ALICE_KEY) as alice:
        ok = alice.post("/memories", json={"messages": [{"role": "user", "content": "hi"}], "user_id": "alice", "infer": False})
        assert ok.status_code == 200
        refused = [
            alice.post("/memories", json={"messages": [{"role": "user", "content": "x"}], "user_id": "bob", "infer": False}),
            alice.post("/memories", json={"messages": [{"role": "user", "content": "x"}], "agent_id": "a", "infer": False}),
            alice.get("/memories", params={"user_id": "bob"}),
            alice.post("/search", json={"query": "secret", "user_id": "bob"}),
            alice.delete("/memories", params={"user_id": "bob"}),
            alice.get("/timeline", params={"entity": "x", "user_id": "bob"}),
            alice.get("/provenance/some-add", params={"user_id": "bob"}),
            alice.get("/graph", params={"user_id": "alicex"}),
            alice.post("/reset"),
        ]
        for response in refused:
            assert response.status_code == 403, (response.request.url, response.text)
            assert response.json()["detail"]
        # by id: another tenant's memory answers exactly as an unknown id (404), so ids cannot be probed
        unknown = str(uuid.uuid4())
        for call in (lambda i: alice.get(f"/memories/{i}"), lambda i: alice.put(f"/memories/{i}", json={"text": "changed"}),
                     lambda i: alice.delete(f"/memories/{i}"), lambda i: alice.get(f"/memories/{i}/history")):
            theirs, missing = call(bob), call(unknown)
            assert theirs.status_code == missing.status_code == 404, (theirs.request.url, theirs.text)
            assert theirs.json() == {k: (v.replace(unknown, bob) if isinstance(v, str) else v) for k, v in missing.json().items()}
    with _client(url, ACME_KEY) as acme:
        assert acme.get("/memories", params={"user_id": "acme:1"}).status_code == 200
        assert acme.get("/memories", params={"user_id": "acme"}).status_code == 403
    with _client(url, ADMIN_KEY) as admin:
        assert admin.get(f"/memories/{bob}").json()["memory"] == "bob's secret"  # nothing changed
        assert [e["event"] for e in admin.get(f"/memories/{bob}/history").json()] == ["ADD"]
    log = (folder / "server.log").read_text(errors="replace")
    assert ALICE_KEY not in log and ADMIN_KEY not in log


def test_an_add_answers_its_id_and_provenance_404s_alike_for_unknown_and_foreign_ids(rest, llm):
    url, _ = rest
    user, other = "acme:" + uuid.uuid4().hex[:8], "acme:" + uuid.uuid4().hex[:8]
    llm.enqueue("extract_facts", {"facts": ["Drinks green tea"]})  # no graph: an add of memories only
    with _client(url, ACME_KEY) as c:
        added = c.post("/memories", json={"messages": [{"role": "user", "content": "I drink green tea"}], "user_id": user},
                       headers={"Idempotency-Key": "tea-1"}).json()
        add_id = added["add_id"]
        again = c.post("/memories", json={"messages": [{"role": "user", "content": "I drink green tea"}], "user_id": user},
                       headers={"Idempotency-Key": "tea-1"}).json()
        assert again["add_id"] == add_id and again["results"] == added["results"]  # the retry's answer, nothing written
        why = c.get(f"/provenance/{add_id}", params={"user_id": user})
        assert why.status_code == 200 and [e["new_memory"] for e in why.json()["memories"]] == ["Drinks green tea"]
        (row,) = c.get(f"/memories/{added['results'][0]['id']}/history").json()
        assert row["add_id"] == add_id
        unknown = uuid.uuid4().hex
        theirs, missing = c.get(f"/provenance/{add_id}", params={"user_id": other}), c.get(f"/provenance/{unknown}", params={"user_id": user})
        assert theirs.status_code == missing.status_code == 404
        assert theirs.json()["error"] == "NotFoundError"
        assert theirs.json() == {k: (v.replace(unknown, add_id) if isinstance(v, str) else v) for k, v in missing.json().items()}


def test_bad_input_gets_json_4xx_and_writes_nothing(rest_embedded, llm):
    url, _ = rest_embedded
    user = "alice"
    with _client(url, ALICE_KEY) as c:
        before = c.get("/memories", params={"user_id": user}).json()["results"]
        cases = {
            "malformed json": c.post("/memories", content=b'{"messages": [', headers={"content-type": "application/json"}),
            "unknown field": c.post("/memories", json={"messages": [{"role": "user", "content": "x"}], "user_id": user,
                                                       "infer": False, "colour": "red"}),
            "missing scope": c.post("/memories", json={"messages": [{"role": "user", "content": "x"}], "infer": False}),
            "bad role": c.post("/memories", json={"messages": [{"role": "robot", "content": "x"}], "user_id": user}),
            "invalid date": c.post("/search", json={"query": "x", "user_id": user, "as_of": "yesterday-ish"}),
            "bad timestamp": c.post("/memories", json={"messages": [{"role": "user", "content": "x"}], "user_id": user,
                                                       "infer": False, "timestamp": "31/12/2024"}),
            "oversized": c.post("/memories", json={"messages": [{"role": "user", "content": "x" * 30000}], "user_id": user}),
            "bad limit": c.get("/memories", params={"user_id": user, "limit": 0}),
            "update without text": c.put("/memories/nope", json={}),
            "unknown id": c.get("/memories/does-not-exist"),
        }
        expected = {"malformed json": 400, "unknown field": 400, "missing scope": 400, "bad role": 400, "invalid date": 400,
                    "bad timestamp": 400, "oversized": 413, "bad limit": 400, "update without text": 400, "unknown id": 404}
        for name, response in cases.items():
            assert response.status_code == expected[name], (name, response.text)
            body = response.json()
            assert body["detail"] and isinstance(body["detail"], str) and body["error"], name
            assert "Traceback" not in response.text
        assert "colour" in json.dumps(cases["unknown field"].json())
        assert "as_of" in cases["invalid date"].json()["detail"]
        assert c.get("/memories", params={"user_id": user}).json()["results"] == before
    docs = httpx.get(url + "/docs")
    assert docs.status_code == 200 and "swagger" in docs.text.lower()
    paths = httpx.get(url + "/openapi.json").json()["paths"]
    assert {"/memories", "/memories/{memory_id}", "/memories/{memory_id}/history", "/search", "/reset", "/timeline", "/graph",
            "/provenance/{add_id}"} <= set(paths)


def test_admin_reset(rest_embedded):
    url, _ = rest_embedded
    with _client(url, ADMIN_KEY) as admin:
        admin.post("/memories", json={"messages": [{"role": "user", "content": "x"}], "user_id": "carol", "infer": False})
        assert admin.post("/reset").status_code == 200
        assert admin.get("/memories", params={"user_id": "carol"}).json()["results"] == []
