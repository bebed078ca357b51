"""The REST server with a tenant key: start `graphmem serve`, then talk to it with httpx.

    pip install 'graphmem[server]' httpx    # the server, and httpx: the client this example talks with
    python examples/rest_client.py

The keys file holds only the SHA-256 of each key and the users it may touch; a request names its
key in X-API-Key (or Authorization: Bearer/Token). Another tenant's memory is "not found".
"""

import json
import secrets
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
from _models import models

from graphmem.server.access import hash_key

SCRIPT = [{"text": "I am allergic to peanuts", "facts": ["Is allergic to peanuts"],
           "entities": [("I", "person"), ("peanuts", "food")], "relations": [("I", "is_allergic_to", "peanuts")]}]

key = secrets.token_urlsafe(24)  # give this to the app that serves alice; keep only its hash on the server
with models(SCRIPT) as config, tempfile.TemporaryDirectory() as tmp:
    (Path(tmp) / "config.json").write_text(json.dumps(config))
    (Path(tmp) / "keys.json").write_text(json.dumps({"keys": [{"name": "alice-app", "sha256": hash_key(key), "users": ["alice"]}]}))
    with socket.socket() as s:  # a free port
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([sys.executable, "-m", "graphmem.cli.main", "serve", "--config", f"{tmp}/config.json",
                               "--keys", f"{tmp}/keys.json", "--port", str(port)])
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):  # wait until it answers
            try:
                if httpx.get(f"{base}/health").status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.1)
        with httpx.Client(base_url=base, headers={"X-API-Key": key}, timeout=60) as api:
            added = api.post("/memories", json={"messages": [{"role": "user", "content": "I am allergic to peanuts"}],
                                                "user_id": "alice"}).json()
            print("added:", [m["memory"] for m in added["results"]])
            found = api.post("/search", json={"query": "am I allergic to peanuts?", "user_id": "alice"}).json()
            print("search:", [m["memory"] for m in found["results"]], [(r["relationship"], r["destination"]) for r in found["relations"]])
            print("bob's memories with alice's key:", api.get("/memories", params={"user_id": "bob"}).status_code)
        print("health:", httpx.get(f"{base}/health").json()["status"])
    finally:
        server.terminate()
        server.wait(30)
