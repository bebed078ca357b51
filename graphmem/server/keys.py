"""The key rules every HTTP route shares (REST and the inspector): which tenant a request's key is,
and whether it may use the scope it names. ui.py and rest.py both build on them, so they live here,
below both.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, HTTPException, Request, Security
from fastapi.security import HTTPAuthorizationCredentials

from graphmem.errors import AccessDeniedError, InvalidInputError
from graphmem.server import manners
from graphmem.server.access import ScopeIds, Tenant, Tenants

#: Tenant of a server started with --no-auth (local development only).
OPEN = Tenant("open", admin=True)

Scope = dict[str, str | None]


async def _caller(
    request: Request,
    x_api_key: Annotated[str | None, Security(manners.API_KEY_HEADER)] = None,
    _bearer: Annotated[HTTPAuthorizationCredentials | None, Security(manners.BEARER)] = None,
) -> Tenant:
    """The tenant of the request's key (``Authorization: Token <key>`` or ``Bearer``, or X-API-Key);
    its name goes to the access log (request.state.key_name), never the key."""
    tenants: Tenants | None = request.app.state.tenants
    if tenants is None:
        return OPEN
    key = x_api_key
    authorization = request.headers.get("authorization")
    if authorization:
        kind, _, token = authorization.strip().partition(" ")
        if kind.lower() in ("token", "bearer") and token.strip():
            key = token.strip()
    tenant = tenants.find(key)
    if tenant is None:
        raise HTTPException(401, "a valid API key is required (Authorization: Token <key>, or X-API-Key)",
                            headers={"WWW-Authenticate": "Token"})
    request.state.key_name = tenant.name
    return tenant


Caller = Annotated[Tenant, Depends(_caller)]


def allowed(tenant: Tenant, user_id: str | None, agent_id: str | None, run_id: str | None) -> ScopeIds:
    """The scope of a request, if the key may use it (a scope is required: 400 before 403)."""
    if user_id is None and agent_id is None and run_id is None:
        raise InvalidInputError("at least one of user_id, agent_id, run_id is required")
    if not tenant.allows_user(user_id):
        raise AccessDeniedError(f"this key may only use scopes of the users {tenant.describe()}")
    return {"user_id": user_id, "agent_id": agent_id, "run_id": run_id}
