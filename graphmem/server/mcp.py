"""``graphmem mcp``: graphmem's memory as MCP tools (official MCP Python SDK, ``MCPServer``).

Two ways to scope, chosen when the server starts:
- fixed (``--user alice`` and/or ``--agent``/``--run``): tools take no scope arguments and only ever
  touch that scope; a memory id of another scope is "not found".
- per call (``--scope-per-call``): every tool takes ``user_id`` / ``agent_id`` / ``run_id`` (at
  least one), and tools on a memory id check the memory belongs to the scope named.
Over HTTP with keys (``--keys``, the REST server's keys file; mcp_http.py), every call's key must be
bound to the user of the scope it uses (fixed or named), as on the REST server; otherwise the call
fails with AccessDeniedError. Per-call scopes over HTTP need keys, or an explicit ``--no-auth``.
Arguments follow the one table of every door (graphmem.schema.limits): unknown ones are refused,
types are strict ("yes" is not a boolean, "10" not a number), and a bad one is a tool error
"InvalidInputError: <field>: <why>", like every refusal. A memory read by id is the scope's or "not
found", decided by the store's lookup before the memory is loaded (server/owned.py).
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse

from graphmem.aio import AsyncMemory
from graphmem.errors import AccessDeniedError, GraphMemError, InvalidInputError, MissingScopeError
from graphmem.observability.propagation import joined
from graphmem.results import MemoryResult, SearchResult
from graphmem.schema import limits
from graphmem.server import owned, views
from graphmem.server.access import ScopeIds, Tenants, key_of, scope_ids
from graphmem.server.views import ACCESS, neighbourhood
from graphmem.types import Owners

SCOPE_KEYS = ("user_id", "agent_id", "run_id")
Scope = dict[str, str | None]
Tool = Callable[..., Awaitable[Any]]


class Message(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)
    role: limits.Role = "user"  # the one table's roles, as on every door
    content: str


Text = Annotated[str, Field(min_length=1)]  # sizes are the core's (graphmem.schema.limits), as on every door
When = Annotated[str | None, Field(description="ISO-8601 date or datetime, e.g. 2024-06-15")]
#: ``limit``: the one table's bound (RESULT_LIMIT), checked by the core as on every door; shown in the schema
Limit = Annotated[int, Field(json_schema_extra={"minimum": 1, "maximum": limits.RESULT_LIMIT})]
#: the SDK hands a tool the raw arguments under this name (strict_arguments): graphmem validates them itself
RAW = "graphmem_raw_arguments"


class Tools:
    """The tool implementations; ``scope`` is the fixed scope, or None when each call names one."""

    def __init__(self, memory: AsyncMemory, scope: Scope | None, tenants: Tenants | None = None) -> None:
        self.memory = memory
        self.fixed = scope
        self.tenants = tenants
        self.models: dict[str, type[BaseModel]] = {}  # each tool's strict argument model (strict_arguments)

    def admit(self, headers: Any, given: Scope) -> None:
        """With keys: the call's key must be bound to the user of the scope it uses (a scope first:
        no scope is a MissingScopeError, as on REST, before the key is judged)."""
        if self.tenants is None:
            return
        scope = self._scope(given)
        if not any(scope.values()):
            raise MissingScopeError("at least one of user_id, agent_id, run_id is required")
        tenant = self.tenants.find(key_of(headers))
        if tenant is None:
            raise AccessDeniedError("a valid API key is required (Authorization: Bearer <key>, or X-API-Key)")
        if not tenant.allows_user(scope["user_id"]):
            raise AccessDeniedError(f"this key may only use scopes of the users {tenant.describe()}")

    def _scope(self, given: Scope) -> ScopeIds:
        return scope_ids(self.fixed if self.fixed is not None else given)

    async def _owned(self, memory_id: str, given: Scope) -> MemoryResult:
        """The memory, if it is the scope's: the store decides before loading it (owned.py, REST's path)."""
        scope = self._scope(given)
        if not any(scope.values()):
            raise MissingScopeError("at least one of user_id, agent_id, run_id is required")
        return await owned.memory(self.memory, memory_id, Owners.of_scope(**scope))

    async def add_memory(self, messages: str | list[Message], metadata: dict[str, Any] | None = None, infer: bool = True,
                         timestamp: When = None, idempotency_key: str | None = None, **scope: str | None) -> dict[str, Any]:
        """Remember a message (or a conversation: a list of {role, content}) for the scope. With infer (default)
        graphmem extracts short facts and a knowledge graph of entities and relations, reconciled with what it
        already knows (contradicted relations are retired, not deleted); infer=false stores the text verbatim.
        timestamp: when it was said (default now). idempotency_key: a retry with the same key returns the first
        result and stores nothing twice. Returns the memory events and the relations added/retired."""
        payload: Any = messages if isinstance(messages, str) else [m.model_dump() for m in messages]
        return await self.memory.add(payload, **self._scope(scope), metadata=metadata, infer=infer, timestamp=timestamp,
                                     idempotency_key=idempotency_key)

    async def search_memory(self, query: Text, limit: Limit = 10,
                            as_of: When = None, known_at: When = None, filters: dict[str, Any] | None = None,
                            **scope: str | None) -> SearchResult:
        """Find memories and knowledge-graph relations relevant to a query (no LLM call). as_of: what was true at
        that time (event time, default now). known_at: what graphmem believed at that time (transaction time).
        filters: metadata filters on memories."""
        return await self.memory.search(query, **self._scope(scope), limit=limit, as_of=as_of, known_at=known_at,
                                        filters=filters)

    async def get_memories(self, include_invalidated: bool = False, limit: Limit = 100,
                           **scope: str | None) -> SearchResult:
        """List the scope's memories and current relations, oldest first; include_invalidated adds retired
        relations (history)."""
        return await self.memory.get_all(**self._scope(scope), include_invalidated=include_invalidated, limit=limit)

    async def get_memory(self, memory_id: Text, **scope: str | None) -> MemoryResult:
        """One memory by id, with its text, metadata and times."""
        return await self._owned(memory_id, scope)

    async def update_memory(self, memory_id: Text, text: Text, **scope: str | None) -> dict[str, Any]:
        """Replace the text of a memory (kept in its history)."""
        await self._owned(memory_id, scope)
        return await self.memory.update(memory_id, text)

    async def delete_memory(self, memory_id: Text, **scope: str | None) -> dict[str, Any]:
        """Delete a memory for good (its history keeps a DELETE event)."""
        await self._owned(memory_id, scope)
        return await self.memory.delete(memory_id)

    async def entity_timeline(self, entity: Text, **scope: str | None) -> dict[str, Any]:
        """Every version of every relation touching an entity (e.g. "Boston", or "me" for the user), in
        event-time order, with valid_at/invalid_at (when true in the world) and created_at/expired_at (when
        graphmem learned/retired it)."""
        return await self.memory.timeline(entity, **self._scope(scope))

    async def entity_neighbourhood(self, entity: Text, as_of: When = None, known_at: When = None,
                                   **scope: str | None) -> dict[str, Any]:
        """The relations touching an entity that hold at as_of (default now), as graphmem knew them at known_at
        (default now)."""
        return neighbourhood(await self.memory.timeline(entity, **self._scope(scope)), as_of, known_at)

    async def relation_provenance(self, add_id: Text, **scope: str | None) -> dict[str, Any]:
        """Why a relation is believed: the messages, memory changes and relation versions of one add, named
        by a relation's provenance (added_by / retired_by). Messages older than the conversation log's
        limit are gone (messages_kept false)."""
        return await self.memory.provenance(add_id, **self._scope(scope))

    async def get_summary(self, **scope: str | None) -> dict[str, Any]:
        """The scope's rolling conversation summary (null before the first one)."""
        return {"summary": await self.memory.get_summary(**self._scope(scope))}


TOOL_NAMES = ("add_memory", "search_memory", "get_memories", "get_memory", "update_memory", "delete_memory",
              "entity_timeline", "entity_neighbourhood", "relation_provenance", "get_summary")


def bound(tools: Tools, name: str) -> Tool:
    """The tool function the SDK sees: the method's arguments, plus user_id/agent_id/run_id when each
    call names its scope (their schema and validation come from this signature)."""
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver.exceptions import ToolError

    method = getattr(tools, name)
    settings = tools.memory.sync.config.tracing
    # a call whose HTTP headers name a trace joins it (the SDK's own span follows the message's _meta only)
    tracing = (settings.enabled, settings.include_text)

    async def tool(**kwargs: Any) -> Any:
        started = time.perf_counter()
        outcome = "failed"
        context = kwargs.pop("context", None)
        headers = context.headers if context is not None else None
        try:
            with joined(headers, f"tools/call {name}", {"mcp.method.name": "tools/call", "gen_ai.tool.name": name,
                                                        "gen_ai.operation.name": "execute_tool"}, *tracing, only_to_join=True):
                kwargs = checked(tools.models[name], kwargs.pop(RAW, kwargs))
                tools.admit(headers, {k: kwargs.get(k) for k in SCOPE_KEYS})
                result = await method(**kwargs)
            outcome = "ok"
            return result
        except GraphMemError as exc:  # an anticipated failure: the model reads the reason
            outcome = type(exc).__name__
            if views.public_detail(exc) != str(exc):  # a failure of the server's parts: its text goes to the log only
                ACCESS.warning("tool %s failed: %s: %s", name, type(exc).__name__, exc)
            raise ToolError(f"{type(exc).__name__}: {views.public_detail(exc)}") from exc
        finally:  # the access log: which tool, how it ended, how long (no arguments: they hold user data)
            ACCESS.info("tool %s %s %.1fms", name, outcome, (time.perf_counter() - started) * 1000)

    params = [p for p in inspect.signature(method, eval_str=True).parameters.values() if p.kind is not p.VAR_KEYWORD]
    if tools.fixed is None:
        described = Annotated[str | None, Field(description="scope: at least one of user_id, agent_id, run_id")]
        params += [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=described) for k in SCOPE_KEYS]
    # the SDK hands a parameter annotated Context the request's context (its HTTP headers carry the key)
    params.append(inspect.Parameter("context", inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Context))
    tool.__signature__ = inspect.Signature(params, return_annotation=dict[str, Any])  # type: ignore[attr-defined]  # inspect honours it; typeshed's functions lack it
    tool.__name__ = name
    tool.__doc__ = method.__doc__
    tool.__annotations__ = {p.name: p.annotation for p in params} | {"return": dict[str, Any]}
    return tool


def build_server(memory: AsyncMemory, scope: Scope | None, tenants: Tenants | None = None) -> Any:
    from mcp.server.mcpserver import MCPServer

    fixed = None if scope is None else {k: scope.get(k) for k in SCOPE_KEYS}
    tools = Tools(memory, fixed, tenants)
    named = ", ".join(f"{k}={v}" for k, v in (fixed or {}).items() if v) or "the scope each call names"
    server = MCPServer("graphmem", instructions=f"Long-term memory (facts and a temporal knowledge graph) for {named}.",
                       log_level="WARNING")

    probe = views.HealthProbe(memory)

    async def health(request: Request) -> JSONResponse:
        body, status = await probe.check()
        return JSONResponse(body, status_code=status)

    server.custom_route("/health", methods=["GET"])(health)  # streamable HTTP only; no scope, no key, no arguments

    for name in TOOL_NAMES:
        server.add_tool(bound(tools, name), name=name, description=" ".join((getattr(Tools, name).__doc__ or "").split()))
        tools.models[name] = strict_arguments(server, name)
    return server


def strict_arguments(server: Any, name: str) -> type[BaseModel]:
    """Arguments as the one rule of every door wants them: unknown ones refused (the SDK ignores them),
    no coercion ("yes" is not a boolean, "10" not a number; the SDK's lax model and its JSON-in-a-string
    pre-parsing would turn them into one), and a bad one refused as graphmem's InvalidInputError, like
    every other refusal, not as the SDK's validation text. The SDK is left to pass the raw arguments
    (under RAW); the tool validates them with the strict model returned here."""
    from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata

    class RawArguments(FuncMetadata):
        def validate_arguments(self, arguments_to_validate: dict[str, Any]) -> dict[str, Any]:
            return {RAW: dict(arguments_to_validate)}

    tool = server._tool_manager.get_tool(name)
    model = tool.fn_metadata.arg_model
    config = ConfigDict(arbitrary_types_allowed=True, extra="forbid", strict=True)
    tool.fn_metadata = RawArguments.model_construct(**{field: getattr(tool.fn_metadata, field) for field in FuncMetadata.model_fields})
    tool.parameters["additionalProperties"] = False
    strict: type[BaseModel] = type(model.__name__, (model,), {"model_config": config})
    return strict


def checked(model: type[BaseModel], arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments validated by ``model`` (strict), one level deep; InvalidInputError naming each bad one."""
    try:
        valid = model.model_validate(arguments)
    except ValidationError as exc:
        raise InvalidInputError(views.invalid_request(exc.errors())) from exc
    return {field: getattr(valid, field) for field in type(valid).model_fields}


def serve(config: dict[str, Any] | None, scope: Scope | None, *, http: bool, host: str, port: int,
          tenants: Tenants | None = None) -> None:
    memory = AsyncMemory(config)
    try:
        server = build_server(memory, scope, tenants)
        if http:
            from graphmem.server import mcp_http

            mcp_http.run(server, tenants, host, port)
        else:
            server.run("stdio")
    finally:
        memory.sync.close()
