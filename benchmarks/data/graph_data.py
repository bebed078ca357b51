"""Generated personal graphs and the questions asked of them (benchmarks.retrieval.graph_retrieval).

One user per graph: a hub of 100+ relations of many kinds (benchmarks.data.graph_kinds), some with
history (an earlier version retired when the current one started: valid_at / invalid_at and the
matching created_at / expired_at), the people around the user with relations of their own, and the
places and organisations those lead to. Questions:

- ``paraphrase``: first-person, no word shared with the answering triple (names, relationship,
  entity types; checked here with graphmem's tokeniser, so not even a stem);
- ``shared``: first-person, sharing at least one word with it;
- ``as_of``: about an earlier version, asked with ``as_of`` inside its validity;
- ``multihop``: names a person near the user, answered by a two-relation path (``hops=2``).

``split``: "dev" asks the phrasings at even positions of each hand-written list, "heldout" the odd
ones, so a held-out seed is asked in words the dev runs never saw.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import datetime, timezone

from benchmarks.data.graph_kinds import (
    CHAINS,
    CITY_COUNTRY,
    COMPANIES,
    EXTRA_PEOPLE,
    FILLERS,
    KINDS,
    ORG_CITY,
    OTHER_PETS,
    PERSON_FACTS,
    UNIVERSITIES,
    Kind,
)
from graphmem.lifecycle.export import ScopeGraph
from graphmem.retrieval.text import tokenize
from graphmem.types import Entity, Relation, Scope, canonical_name, new_id

USERS = ("alice", "bruno", "chen", "dana", "emeka", "farah", "goran", "hiro", "isla", "jonas", "kemal", "lucia")
SPLITS = ("dev", "heldout")
MULTIHOP_PER_USER = 8
NOW = datetime(2026, 6, 1, tzinfo=timezone.utc)


@dataclass
class Question:
    text: str
    user_id: str
    slice: str
    gold: list[str]  # relation ids; every one must be in the top k
    kind: str
    as_of: datetime | None = None
    hops: int = 1


@dataclass
class UserGraph:
    user_id: str
    entities: dict[str, Entity] = field(default_factory=dict)  # canonical -> entity
    relations: list[Relation] = field(default_factory=list)
    questions: list[Question] = field(default_factory=list)

    def scope_graph(self) -> ScopeGraph:
        return ScopeGraph(Scope.of(user_id=self.user_id), list(self.entities.values()), list(self.relations), include_invalidated=True)

    def visible(self, as_of: datetime | None) -> list[Relation]:
        """The relations search sees at ``as_of`` (default now): valid then."""
        at = as_of or NOW
        return [r for r in self.relations if (r.valid_at is None or r.valid_at <= at) and (r.invalid_at is None or at < r.invalid_at)]


def sentence(rel: Relation, types: dict[str, str]) -> str:
    """The baseline's text of a triple: "alice (person) has pet Rex (dog)"."""
    words = rel.relationship.lower().replace("_", " ")
    return f"{rel.source} ({types.get(rel.source_id, 'entity')}) {words} {rel.destination} ({types.get(rel.destination_id, 'entity')})"


class _Builder:
    def __init__(self, user_id: str, rng: random.Random) -> None:
        self.g = UserGraph(user_id)
        self.rng = rng
        self.user = self.entity(user_id, "person")

    def entity(self, name: str, entity_type: str) -> Entity:
        key = canonical_name(name)
        found = self.g.entities.get(key)
        if found is None:
            found = self.g.entities[key] = Entity(new_id(), name, key, entity_type, 1, NOW, NOW)
        return found

    def relate(self, src: Entity, rel: str, dst: Entity, valid_at: datetime, invalid_at: datetime | None = None) -> Relation:
        r = Relation(new_id(), src.id, src.name, rel, dst.id, dst.name, valid_at, invalid_at, created_at=valid_at, expired_at=invalid_at,
                     source_type=src.entity_type, destination_type=dst.entity_type)
        self.g.relations.append(r)
        return r

    def when(self, start: int = 2010, end: int = 2024) -> datetime:
        return datetime(self.rng.randint(start, end), self.rng.randint(1, 12), self.rng.randint(1, 28), tzinfo=timezone.utc)


def triple_words(rel: Relation) -> set[str]:
    return set(tokenize(f"{rel.source} {rel.relationship} {rel.destination} {rel.source_type or ''} {rel.destination_type or ''}"))


def _phrasings(options: tuple[str, ...], split: str) -> list[str]:
    return list(options[SPLITS.index(split)::2])


def generate_user(user_id: str, seed: int, split: str, filler_scale: int = 1) -> UserGraph:
    rng = random.Random(f"{seed}-{split}-{user_id}")
    b = _Builder(user_id, rng)
    people: list[Entity] = []
    for kind in KINDS:
        _kind(b, kind, split, people)
    _fillers(b, filler_scale, people)
    for person in people:
        _person_facts(b, person)
    _second_hops(b)
    _shared_questions(b, split)
    _multihop_questions(b, split, people)
    return b.g


def _kind(b: _Builder, kind: Kind, split: str, people: list[Entity]) -> None:
    rng, g = b.rng, b.g
    rel_type = rng.choice(kind.types)
    choices = [v for v in kind.values if canonical_name(v[0]) not in g.entities]
    (name, dtype), *rest = rng.sample(choices, len(choices))
    dest = b.entity(name, dtype)
    if kind.person:
        people.append(dest)
    if kind.past and rest:
        old_name, old_type = rest[0]
        start, switch = b.when(2008, 2013), b.when(2016, 2021)
        old = b.relate(b.user, rel_type, b.entity(old_name, old_type), start, switch)
        current = b.relate(b.user, rel_type, dest, switch)
        asked = [q for q in _phrasings(kind.past, split) if not set(tokenize(q)) & triple_words(old)]
        if asked:
            at = start + (switch - start) * rng.uniform(0.2, 0.8)
            g.questions.append(Question(rng.choice(asked), g.user_id, "as_of", [old.id], kind.key, as_of=at))
    else:
        current = b.relate(b.user, rel_type, dest, b.when())
    words = triple_words(current)
    asked = [q for q in _phrasings(kind.ask, split) if not set(tokenize(q)) & words]
    if asked:
        g.questions.append(Question(rng.choice(asked), g.user_id, "paraphrase", [current.id], kind.key))
    shared = [t.format(dest=current.destination, dtype=dtype) for t in kind.shared]
    shared = [q for q in shared if set(tokenize(q)) & words]
    if shared:
        g.questions.append(Question(rng.choice(shared), g.user_id, "shared_candidate", [current.id], kind.key))


def _fillers(b: _Builder, scale: int, people: list[Entity]) -> None:
    for rel_type, dtype, names in FILLERS:
        pool = list(names) if scale <= 1 else [f"{n} {i}" if i else n for i in range(scale) for n in names]
        for name in pool:
            dest = b.entity(name, dtype)
            b.relate(b.user, rel_type, dest, b.when())
            if rel_type == "KNOWS" and len(people) < 12 and b.rng.random() < 0.2:
                people.append(dest)


def _person_facts(b: _Builder, person: Entity) -> None:
    rng = b.rng
    jobs = [v for k in KINDS if k.key == "role" for v in k.values]
    for rel_type, dtype in rng.sample(PERSON_FACTS, 3):
        if dtype == "city":
            name, etype = rng.choice(list(CITY_COUNTRY)), "city"
        elif dtype == "company":
            name, etype = rng.choice(COMPANIES), "company"
        elif dtype == "university":
            name, etype = rng.choice(UNIVERSITIES), "university"
        elif dtype == "occupation":
            name, etype = rng.choice(jobs)
        elif dtype == "pet":
            name, etype = rng.choice([p for p in OTHER_PETS if canonical_name(p[0]) not in b.g.entities] or OTHER_PETS)
        else:
            name, etype = rng.choice([p for p in EXTRA_PEOPLE if canonical_name(p) not in b.g.entities] or EXTRA_PEOPLE), "person"
        b.relate(person, rel_type, b.entity(name, etype), b.when())


def _second_hops(b: _Builder) -> None:
    """Where organisations and cities are; what the people's partners do and where their sisters live."""
    jobs = [v for k in KINDS if k.key == "role" for v in k.values]
    for rel in list(b.g.relations):
        dst = b.g.entities[canonical_name(rel.destination)]
        if rel.relationship == "MARRIED_TO" and rel.source_id != b.user.id:
            b.relate(dst, "WORKS_AS", b.entity(*b.rng.choice(jobs)), b.when())
        elif rel.relationship == "HAS_SISTER" and rel.source_id != b.user.id:
            b.relate(dst, "LIVES_IN", b.entity(b.rng.choice(list(CITY_COUNTRY)), "city"), b.when())
    for ent in list(b.g.entities.values()):
        if ent.name in ORG_CITY:
            city = b.entity(ORG_CITY[ent.name], "city")
            b.relate(ent, "BASED_IN" if ent.entity_type == "company" else "LOCATED_IN", city, b.when(2000, 2005))
    for ent in list(b.g.entities.values()):
        if ent.entity_type == "city" and ent.name in CITY_COUNTRY:
            b.relate(ent, "LOCATED_IN", b.entity(CITY_COUNTRY[ent.name], "country"), b.when(2000, 2005))


def _shared_questions(b: _Builder, split: str) -> None:
    """A third of the shared-word candidates are asked (one question per kind would double the run)."""
    keep = SPLITS.index(split)
    n = 0
    for q in b.g.questions:
        if q.slice == "shared_candidate":
            q.slice = "shared" if n % 3 == keep else "unused"
            n += 1
    b.g.questions = [q for q in b.g.questions if q.slice != "unused"]


def _multihop_questions(b: _Builder, split: str, people: list[Entity]) -> None:
    by_source: dict[str, list[Relation]] = {}
    for r in b.g.visible(None):
        by_source.setdefault(r.source_id, []).append(r)
    found = []
    for person in people:
        for first, second, phrasings in CHAINS:
            for r1 in by_source.get(person.id, []):
                if r1.relationship != first:
                    continue
                follow = [r2 for r2 in by_source.get(r1.destination_id, []) if r2.relationship == second]
                if follow:
                    text = b.rng.choice(_phrasings(phrasings, split)).format(p=person.name)
                    found.append(Question(text, b.g.user_id, "multihop", [r1.id, follow[0].id], first, hops=2))
    b.g.questions.extend(b.rng.sample(found, min(MULTIHOP_PER_USER, len(found))))


def generate(users: int, seed: int, split: str) -> list[UserGraph]:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}")
    names = USERS[:users] if users <= len(USERS) else [f"{USERS[i % len(USERS)]}{i}" for i in range(users)]
    return [generate_user(name, seed, split) for name in names]


def latency_user(seed: int, relations: int = 1000) -> UserGraph:
    """One user whose own node holds about ``relations`` relations (fillers repeated with numbers)."""
    base = sum(len(names) for _, _, names in FILLERS) + len(KINDS)
    scale = max(1, round((relations - len(KINDS)) / (base - len(KINDS))))
    rng = random.Random(f"{seed}-latency")
    b = _Builder("latency-user", rng)
    people: list[Entity] = []
    for kind in KINDS:
        _kind(b, kind, "dev", people)
    _fillers(b, scale, people)
    _second_hops(b)
    b.g.questions = [q for q in b.g.questions if q.slice == "paraphrase"]
    return b.g
