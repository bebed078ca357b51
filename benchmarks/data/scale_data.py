"""A seeded generator of synthetic scopes for the search-at-scale benchmark.

Every user is generated on its own from (seed, user index), so loading streams user by user and a
query can regenerate the user it targets without keeping a million vectors in memory. Embeddings
are random unit vectors (384 dims by default, numpy); a query is a noisy copy of one of the user's
entities (cosine about 0.85 to it), as if the question named that entity. Entity 0 of a user is the
user's own node; relations are random (source, type, destination) triples between the user's
entities, a tenth of them from the user's node.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from graphmem.types import EntityWrite, GraphWrite, MemoryWrite, RelationWrite, Scope, canonical_name

RELATION_TYPES = (
    "LIVES_IN", "WORKS_AT", "LIKES", "DISLIKES", "OWNS", "KNOWS", "VISITED", "PLAYS", "STUDIES", "FRIEND_OF",
    "SIBLING_OF", "MARRIED_TO", "WORKS_WITH", "BORN_IN", "MOVED_TO", "MEMBER_OF", "READS", "WATCHES",
    "COOKS", "TRAVELS_TO", "ALLERGIC_TO", "PREFERS", "USES", "MANAGES",
)  # fmt: skip
ENTITY_TYPES = ("person", "place", "organization", "activity", "food", "object", "event", "animal")
_SYLLABLES = tuple(c + v for c in "bdfgklmnprstvz" for v in "aeiou") + ("ar", "el", "in", "or", "us")
AT = datetime(2025, 1, 1, tzinfo=timezone.utc)
QUERY_NOISE = 0.62  # |noise| relative to the unit target: cosine(query, target) ~ 1/sqrt(1 + 0.62^2) = 0.85


@dataclass
class UserData:
    user_id: str
    names: list[str]
    types: list[str]
    vectors: np.ndarray  # (entities, dims) float32, unit rows
    relations: list[tuple[int, str, int]]  # (source index, type, destination index)
    memories: list[tuple[str, list[int]]]  # (text, mentioned entity indexes)

    @property
    def scope(self) -> Scope:
        return Scope.of(self.user_id)


@dataclass(frozen=True)
class Spec:
    seed: int
    users: int  # light users
    entities_per_user: int
    heavy_entities: int  # 0: no heavy user
    relations_per_entity: float = 2.0
    memories_per_entity: float = 0.2
    dims: int = 384

    def user_ids(self) -> list[str]:
        heavy = ["heavy-0"] if self.heavy_entities else []
        return heavy + [f"light-{i}" for i in range(self.users)]

    def entity_count(self) -> int:
        return self.users * self.entities_per_user + self.heavy_entities


def unit_rows(rng: np.random.Generator, n: int, dims: int) -> np.ndarray:
    v = rng.standard_normal((n, dims)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def _names(rng: np.random.Generator, n: int) -> list[str]:
    """n two-word pseudo names of 2-3 syllables per word (duplicates possible)."""
    syllables = rng.integers(0, len(_SYLLABLES), size=(n, 2, 3))
    lengths = rng.integers(2, 4, size=(n, 2))
    return [" ".join("".join(_SYLLABLES[s] for s in syllables[i, w, : lengths[i, w]]) for w in range(2)) for i in range(n)]


def generate_user(spec: Spec, user_id: str) -> UserData:
    index = -1 if user_id.startswith("heavy") else int(user_id.split("-")[1])
    n = spec.heavy_entities if index < 0 else spec.entities_per_user
    rng = np.random.default_rng([spec.seed, index + 1])
    names, seen = [user_id], {user_id}
    for name in _names(rng, n - 1):
        if name in seen:
            name = f"{name} {len(names)}"
        seen.add(name)
        names.append(name)
    types = ["person"] + [ENTITY_TYPES[t] for t in rng.integers(0, len(ENTITY_TYPES), size=n - 1)]
    vectors = unit_rows(rng, n, spec.dims)
    triples: dict[tuple[int, str, int], None] = {}
    count = int(n * spec.relations_per_entity)
    sources = np.where(rng.random(count) < 0.1, 0, rng.integers(1, n, size=count))
    for src, dst, t in zip(sources.tolist(), rng.integers(1, n, size=count).tolist(),
                           rng.integers(0, len(RELATION_TYPES), size=count).tolist(), strict=False):
        if src != dst:
            triples[(src, RELATION_TYPES[t], dst)] = None
    relations = list(triples)
    picks = rng.choice(len(relations), size=min(len(relations), int(n * spec.memories_per_entity)), replace=False)
    memories = []
    for i in picks:
        s, t, d = relations[int(i)]
        memories.append((f"{names[s]} {t.lower().replace('_', ' ')} {names[d]}", [s, d]))
    return UserData(user_id, names, types, vectors, relations, memories)


def writes(user: UserData, with_memories: bool, chunk: int = 2000) -> Iterator[GraphWrite]:
    """The user as GraphWrites of at most ``chunk`` entities (a relation goes with its later endpoint)."""
    ids = [f"{user.user_id}/e{i}" for i in range(len(user.names))]
    by_chunk: dict[int, list[tuple[int, str, int]]] = {}
    for rel in user.relations:
        by_chunk.setdefault(max(rel[0], rel[2]) // chunk, []).append(rel)
    mem_by_chunk: dict[int, list[tuple[int, tuple[str, list[int]]]]] = {}
    for m, memory in enumerate(user.memories):
        mem_by_chunk.setdefault(max(memory[1]) // chunk, []).append((m, memory))
    for c, start in enumerate(range(0, len(ids), chunk)):
        w = GraphWrite(add_id=f"load-{user.user_id}-{c}", scope=user.scope, at=AT)
        for i in range(start, min(start + chunk, len(ids))):
            w.entities.append(EntityWrite(ids[i], user.names[i], canonical_name(user.names[i]), user.types[i],
                                          user.vectors[i].tolist(), is_new=True))
        w.relations = [RelationWrite(ids[s], t, ids[d], AT) for s, t, d in by_chunk.get(c, [])]
        if with_memories:
            for m, (text, mentions) in mem_by_chunk.get(c, []):
                vec = user.vectors[mentions].sum(axis=0)
                w.memories.append(MemoryWrite("ADD", f"{user.user_id}/m{m}", text, (vec / np.linalg.norm(vec)).tolist(),
                                              {}, "user", [ids[e] for e in mentions]))
        yield w


@dataclass
class Query:
    user_id: str
    text: str
    vectors: list[list[float]]  # one per extracted entity (Mem0's pattern); graphmem uses the first


def queries(spec: Spec, user_ids: list[str], count: int, entities_per_query: int, salt: int) -> list[Query]:
    rng = np.random.default_rng([spec.seed, 10_000_000 + salt])
    out = []
    for _ in range(count):
        user = generate_user(spec, user_ids[int(rng.integers(len(user_ids)))])
        targets = rng.choice(np.arange(1, len(user.names)), size=entities_per_query, replace=False)
        vecs = []
        for t in targets:
            noisy = user.vectors[t] + QUERY_NOISE * unit_rows(rng, 1, spec.dims)[0]
            vecs.append((noisy / np.linalg.norm(noisy)).tolist())
        text = "what about " + " and ".join(user.names[t] for t in targets) + "?"
        out.append(Query(user.user_id, text, vecs))
    return out
