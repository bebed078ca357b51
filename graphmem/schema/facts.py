"""The one wording rule of a relation's fact: the triple in words, with the endpoints' entity types
and, where known, its time. The fact is what a relation means on its own: its embedding is the
relation's ``"vector"`` signal in search (docs/concepts.md, "Relation facts").

    relation_fact("alice", "person", "HAS_PET", "Rex", "dog", self_name="alice")
    -> "I myself have pet Rex (dog)"
    relation_fact("Ana", "person", "SISTER_OF", "alice", "person", self_name="alice")
    -> "Ana (person) sister of me"
    relation_fact("Ana", "person", "LIVES_IN", "Porto", "city", valid_at=datetime(2023, 5, 8, tzinfo=UTC))
    -> "Ana (person) lives in Porto (city) (since 8 May 2023)"

What is embedded (``fact_meaning``) is the fact as it reads, the other end's name included
("I myself take atorvastatin (medication)"). Writing the user's own relations with the other end's
type in place of its name ("I myself take medication") was the rule until the leave-one-dataset-out
report chose against it (``NAME_LEFT_OUT``): it helped on the generated graphs it was made on and
cost the hand-written personas, where names mean something (atorvastatin is a cholesterol drug).

Rules: the relationship type in lower-case words ("HAS_PET" -> "has pet"; the "R_" a type starting
with a digit was given is dropped); an endpoint's type in brackets after its name, except for the
scope's own node (it is the user), an empty or generic type, or a type that is the name itself; the
scope's own node, and the self-references a model may leave ("I", "me", "user"), written in the
first person: "I myself" as the source (its verb in the first person: "I myself live in"), "me" as
the destination; the time as days: "(since D)",
"(until D)", "(from D until D)".

Why the first person: the scope's own node is the one who asks "do I have a dog?" (an agent's
user, or the agent itself in an agent scope). Its name told a first-person question nothing and
took a share of every short fact's embedding; "I myself" meets the question's "I / my / me"
(graph_retrieval, first-person paraphrases hit@5, held-out: MiniLM 0.801 -> 0.849, bge 0.785 ->
0.823; docs/retrieval.md, "Relation facts in the first person"). A store written with the user's
name keeps its facts until ``graphmem reindex --all`` writes them again.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime, timezone

#: types that say nothing about an entity
GENERIC_TYPES = frozenset({"", "entity", "unknown", "thing", "other", "none", "object", "concept"})
#: what a model may leave for the user instead of the user's name
SELF_WORDS = frozenset({"i", "me", "my", "myself", "user", "the user"})
#: the scope's own node in a fact: as the source, as the destination
SELF_SOURCE, SELF_DESTINATION = "I myself", "me"
#: whether a relation of the scope's own node is embedded with the other end's type in place of its
#: name (``fact_meaning``): off, chosen leave one dataset out (benchmarks.retrieval.generalisation,
#: the ``name_left_out`` rule: with it on, the default ranked below the plain fact vector on the
#: personas with bge-small, 0.849 vs 0.866)
NAME_LEFT_OUT = False
_SPACE = re.compile(r"\s+")


def _key(text: str) -> str:
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text).replace("_", " ").casefold()).strip()


def relationship_words(relationship: str) -> str:
    """``HAS_PET`` -> ``has pet``; ``R_2ND_HOME_IN`` -> ``2nd home in``."""
    words = relationship[2:] if relationship.startswith("R_") and relationship[2:3].isdigit() else relationship
    return _SPACE.sub(" ", words.replace("_", " ")).strip().lower() or "related to"


def day(value: datetime) -> str:
    """A day in words, UTC: ``8 May 2023``."""
    value = value.astimezone(timezone.utc)
    return f"{value.day} {value:%B %Y}"


def time_clause(valid_at: datetime | None, invalid_at: datetime | None) -> str:
    if valid_at is not None and invalid_at is not None:
        return f" (from {day(valid_at)} until {day(invalid_at)})"
    if valid_at is not None:
        return f" (since {day(valid_at)})"
    if invalid_at is not None:
        return f" (until {day(invalid_at)})"
    return ""


def _endpoint(name: str, entity_type: str | None, self_name: str, self_word: str) -> str:
    key = _key(name)
    if is_self(name, self_name):
        return self_word
    kind = _key(entity_type or "")
    if kind in GENERIC_TYPES or kind == key:
        return name
    return f"{name} ({kind})"


#: first-person forms the suffix rule below would get wrong
_FIRST_PERSON = {"is": "am", "has": "have", "does": "do", "goes": "go", "was": "was"}


def first_person(words: str) -> str:
    """The relationship's words after "I myself": its first word, when a verb in the third person,
    in the first ("lives in" -> "live in", "has pet" -> "have pet", "is in" -> "am in"); any other
    first word ("sister of", "married to") as it is."""
    head, _, rest = words.partition(" ")
    if head in _FIRST_PERSON:
        head = _FIRST_PERSON[head]
    elif head.endswith("ies") and len(head) > 4:
        head = head[:-3] + "y"  # studies -> study
    elif head.endswith(("sses", "shes", "ches", "xes", "zes")):
        head = head[:-2]  # misses -> miss, watches -> watch
    elif head.endswith("s") and not head.endswith(("ss", "us", "is")) and len(head) > 2:
        head = head[:-1]  # lives -> live, owns -> own
    return f"{head} {rest}".strip()


def _words(relationship: str, source_is_self: bool) -> str:
    words = relationship_words(relationship)
    return first_person(words) if source_is_self else words


def relation_fact(
    source: str,
    source_type: str | None,
    relationship: str,
    destination: str,
    destination_type: str | None,
    *,
    valid_at: datetime | None = None,
    invalid_at: datetime | None = None,
    self_name: str = "",
) -> str:
    """The fact text of one relation version (see the module's rules)."""
    src = _endpoint(source, source_type, self_name, SELF_SOURCE)
    dst = _endpoint(destination, destination_type, self_name, SELF_DESTINATION)
    return f"{src} {_words(relationship, src == SELF_SOURCE)} {dst}{time_clause(valid_at, invalid_at)}"


def is_self(name: str, self_name: str) -> bool:
    """True when ``name`` is the scope's own node (its name, or a self-reference a model left)."""
    key = _key(name)
    return bool(self_name) and (key in SELF_WORDS or key == _key(self_name))


def fact_meaning(
    source: str,
    source_type: str | None,
    relationship: str,
    destination: str,
    destination_type: str | None,
    *,
    valid_at: datetime | None = None,
    invalid_at: datetime | None = None,
    self_name: str = "",
    name_left_out: bool | None = None,
) -> str:
    """The text a relation version's fact embedding is made from.

    The fact itself (``relation_fact``). With ``name_left_out`` (default ``NAME_LEFT_OUT``: off), in
    a relation of the scope's own node the other end is written as its entity type alone, when it
    has an informative one: ``I myself have pet dog`` for ``I myself have pet Rex (dog)``, ``person
    sister of me`` for ``Ana (person) sister of me``. The case for it: the user asks
    about their own relations without the answer's name ("do I have a dog?", "who is my sister?":
    the name is what they want to hear), and a name the model has never seen pulls the fact's
    embedding away from every such question. The name still counts where it is said: BM25 and the
    fulltext index read the fact, a question that names the other end seeds it, and a relation
    between two ends the question names ranks first (retrieval.graph, ``JOINED_SEEDS``).
    graph_retrieval, first-person paraphrases hit@5 (docs/retrieval.md, "What a relation's
    embedding says"). The case against, which the leave-one-dataset-out report upheld: a name
    often means something the question asks about ("which cholesterol drug am I prescribed?").
    """
    src_self, dst_self = is_self(source, self_name), is_self(destination, self_name)
    if (NAME_LEFT_OUT if name_left_out is None else name_left_out) and src_self != dst_self:
        other, kind = (destination, destination_type) if src_self else (source, source_type)
        word = _key(kind or "")
        if word not in GENERIC_TYPES and word != _key(other):
            if src_self:
                return f"{SELF_SOURCE} {_words(relationship, True)} {word}{time_clause(valid_at, invalid_at)}"
            return f"{word} {relationship_words(relationship)} {SELF_DESTINATION}{time_clause(valid_at, invalid_at)}"
    return relation_fact(source, source_type, relationship, destination, destination_type,
                         valid_at=valid_at, invalid_at=invalid_at, self_name=self_name)


def stored_times(
    valid_at: datetime | None, invalid_at: datetime | None, created_at: datetime | None, expired_at: datetime | None
) -> tuple[datetime | None, datetime | None]:
    """The times a stored version's fact states when it is written afresh (``graphmem reindex``, a
    load of an export without facts): an add states a time only when the model gave one, which a
    stored version no longer tells apart from the add's own time, so: ``valid_at`` when it lies on
    another day than ``created_at`` (the add was told of another time), ``invalid_at`` when the
    version was written with it (not set later by a retirement, i.e. not expired)."""
    valid = valid_at if valid_at is not None and (created_at is None or valid_at.date() != created_at.date()) else None
    invalid = invalid_at if invalid_at is not None and expired_at is None else None
    return valid, invalid
