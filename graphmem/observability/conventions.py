"""Span names and attributes after OpenTelemetry's semantic conventions.

Model requests: ``gen_ai.*`` (operation ``chat``, span ``chat {model}``, token usage from the
server's answer). Embedding requests: ``gen_ai.*`` with operation ``embeddings``. Store statements:
``db.*``; a Neo4j statement is named by its cypher/ file (``db.query.summary``, the span's name) and
its ``db.query.text`` is that file, which holds no user data (values travel as parameters, which
are never recorded). The embedded store's operations are named alike, with its own system name.
Each builder runs only when a span records (callers check ``Span.recording``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

#: the model client speaks OpenAI's API, whatever server answers
PROVIDER = "openai"
NEO4J = "neo4j"
EMBEDDED = "graphmem_embedded"


def server_attributes(url: str | None, default_port: int | None = None) -> dict[str, Any]:
    """``server.address`` / ``server.port`` of a URL (never its credentials or path)."""
    if not url:
        return {}
    try:
        parts = urlsplit(url)
        port = parts.port or default_port
    except ValueError:
        return {}
    return {"server.address": parts.hostname, "server.port": port}


def chat_request(model: str, stage: str, params: dict[str, Any], url: str | None) -> tuple[str, dict[str, Any]]:
    """The span name and attributes of one chat-completions request, before it is sent."""
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": PROVIDER,
        "gen_ai.system": PROVIDER,  # the name before gen_ai.provider.name, still read by many backends
        "gen_ai.request.model": model,
        "gen_ai.request.max_tokens": params.get("max_tokens", params.get("max_completion_tokens")),
        "gen_ai.request.temperature": params.get("temperature"),
        "graphmem.stage": stage,
        **server_attributes(url or "https://api.openai.com/v1", 443),
    }
    return f"chat {model}", attributes


def chat_response(response: Any) -> dict[str, Any]:
    """What the server answered: model, id, finish reasons and its own token counts."""
    usage = getattr(response, "usage", None)
    reasons = [str(c.finish_reason) for c in getattr(response, "choices", None) or [] if getattr(c, "finish_reason", None)]
    return {
        "gen_ai.response.model": getattr(response, "model", None),
        "gen_ai.response.id": getattr(response, "id", None),
        "gen_ai.response.finish_reasons": reasons or None,
        "gen_ai.usage.input_tokens": getattr(usage, "prompt_tokens", 0) or 0,
        "gen_ai.usage.output_tokens": getattr(usage, "completion_tokens", 0) or 0,
    }


def embeddings_request(model: str, provider: str, texts: int, dims: int | None) -> tuple[str, dict[str, Any]]:
    return f"embeddings {model}", {
        "gen_ai.operation.name": "embeddings",
        "gen_ai.provider.name": provider,
        "gen_ai.system": provider,
        "gen_ai.request.model": model,
        "gen_ai.embeddings.dimension.count": dims,
        "graphmem.embedding.inputs": texts,
    }


def statement(system: str, name: str, text: str | None = None, namespace: str | None = None,
              access: str | None = None) -> dict[str, Any]:
    """A store statement's attributes: ``name`` is the cypher/ file (or the embedded operation)."""
    return {
        "db.system.name": system,
        "db.system": system,  # the name before db.system.name
        "db.operation.name": name,
        "db.query.summary": name,
        "db.query.text": text,
        "db.namespace": namespace,
        "graphmem.db.access": access,
    }


def returned_rows(rows: Sequence[Any] | Any) -> dict[str, Any]:
    return {"db.response.returned_rows": len(rows)} if isinstance(rows, (list, tuple, set, dict)) else {}
