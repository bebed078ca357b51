"""Who may touch which scope: tenant API keys (REST) and a server's fixed scope (MCP).

Keys file (JSON), keys stored as SHA-256 hex digests only (``printf %s "$KEY" | sha256sum``):

    {"keys": [
      {"name": "support-bot", "sha256": "<hex>", "users": ["alice"], "user_prefixes": ["acme:"]},
      {"name": "ops", "sha256": "<hex>", "admin": true}
    ]}

A key is bound to user ids (exact) and user-id prefixes; a request through it must name a user_id
it is bound to, and a memory read or changed by id must belong to such a user. ``admin`` keys may
touch every scope and call /reset. A key in clear text is never stored, compared or logged.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from graphmem.errors import ConfigError
from graphmem.types import Owners

_HEX64 = re.compile(r"[0-9a-f]{64}")


def hash_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Tenant:
    name: str
    users: frozenset[str] = frozenset()
    user_prefixes: tuple[str, ...] = ()
    admin: bool = False

    def allows_user(self, user_id: str | None) -> bool:
        if self.admin:
            return True
        if user_id is None:
            return False
        return user_id in self.users or any(user_id.startswith(p) for p in self.user_prefixes)

    def owners(self) -> Owners | None:
        """Whose memories this key may read by id (None: an admin's, everyone's), checked by the store."""
        return None if self.admin else Owners(tuple(sorted(self.users)), self.user_prefixes)

    def describe(self) -> str:
        bound = sorted(self.users) + [p + "*" for p in self.user_prefixes]
        return ", ".join(bound) or "nothing"


@dataclass
class Tenants:
    by_digest: dict[str, Tenant] = field(default_factory=dict)

    def find(self, key: str | None) -> Tenant | None:
        return self.by_digest.get(hash_key(key)) if key else None

    @classmethod
    def load(cls, path: Path) -> Tenants:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read keys file {path}: {exc}") from exc
        entries = data.get("keys") if isinstance(data, dict) else None
        if not isinstance(entries, list) or not entries:
            raise ConfigError(f"keys file {path} must hold {{\"keys\": [...]}} with at least one key")
        tenants = cls()
        for i, entry in enumerate(entries):
            digest, tenant = _tenant(entry, f"{path}: keys[{i}]")
            if digest in tenants.by_digest:
                raise ConfigError(f"{path}: keys[{i}] repeats the digest of another key")
            tenants.by_digest[digest] = tenant
        return tenants


def _tenant(entry: Any, where: str) -> tuple[str, Tenant]:
    if not isinstance(entry, dict):
        raise ConfigError(f"{where} must be an object")
    unknown = set(entry) - {"name", "sha256", "users", "user_prefixes", "admin"}
    if unknown:
        raise ConfigError(f"{where} has unknown fields {sorted(unknown)} (a key is stored as its sha256, never in clear)")
    digest = entry.get("sha256")
    if not isinstance(digest, str) or not _HEX64.fullmatch(digest.lower()):
        raise ConfigError(f"{where}: sha256 must be the 64-hex-digit SHA-256 of the key")
    users = entry.get("users", [])
    prefixes = entry.get("user_prefixes", [])
    for label, values in (("users", users), ("user_prefixes", prefixes)):
        if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
            raise ConfigError(f"{where}: {label} must be a list of non-empty strings")
    admin = entry.get("admin", False)
    if not isinstance(admin, bool):
        raise ConfigError(f"{where}: admin must be true or false")
    if not admin and not users and not prefixes:
        raise ConfigError(f"{where}: a key needs users, user_prefixes or admin")
    name = entry.get("name") or digest[:8]
    return digest.lower(), Tenant(str(name), frozenset(users), tuple(prefixes), admin)


def key_of(headers: Mapping[str, str] | None) -> str | None:
    """The key a request carries: ``Authorization: Bearer <key>`` (or ``Token <key>``), else ``X-API-Key``."""
    if not headers:
        return None
    authorization = headers.get("authorization")
    if authorization:
        kind, _, token = authorization.strip().partition(" ")
        if kind.lower() in ("token", "bearer") and token.strip():
            return token.strip()
    return headers.get("x-api-key") or None


class ScopeIds(TypedDict):
    """One request's scope (None: not named), spread as keyword arguments of Memory's methods."""

    user_id: str | None
    agent_id: str | None
    run_id: str | None


def scope_ids(given: Mapping[str, str | None]) -> ScopeIds:
    """The three ids of ``given``; an id it does not name is None, as Memory's default."""
    return {"user_id": given.get("user_id"), "agent_id": given.get("agent_id"), "run_id": given.get("run_id")}
