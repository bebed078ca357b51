"""How the fake model answers the memory-update stage and checks its scripted retirements: the way
the prompts ask a careful model to (prompts/update_memory.txt, prompts/single_pass.txt).

It reads what graphmem shows the model (the existing memories under short ids, the new facts, the
existing relations) from the prompt text, so it works the same in both add modes and through any
door (FakeModel in a test, ``graphmem fake-llm`` behind the CLI, REST or MCP):

- an existing memory that states a relation this add retires (``no_longer_true`` in the staged
  prompt; in the single-pass prompt, a memory naming the retired relation's other end) is UPDATEd
  to the new fact that replaces it ("Lives in Boston" + "Lives in Denver" -> "Lives in Denver"),
  else DELETEd;
- a new fact no memory already says is ADDed; everything else is NONE.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from graphmem.stages.self_refs import is_self
from graphmem.types import canonical_name, sanitize_relation_type

Triple = tuple[str, str, str]
#: fact -> the (relationship, destination) pairs the script that produced it asserts
RelationsOf = Callable[[str], Sequence[tuple[str, str]]]

_MEMORIES = "Existing memories:\n"
_NEW_FACTS = "New facts:"
_RELATION_LINE = re.compile(r"^- (.+?) -- (\S+) -- (.+)$", re.MULTILINE)
_ENDED = re.compile(r"^(.+?) ([A-Z][A-Z0-9_]*) (.+)$")  # "alice LIVES_IN New York"
_USER = re.compile(r'The user is "([^"]*)"')
_SMALL_WORDS = frozenset({"i", "me", "my", "a", "an", "the", "in", "at", "on", "to", "of", "for", "and", "is", "was", "with"})


@dataclass(frozen=True)
class Shown:
    """A memory as the prompt lists it."""

    id: str
    text: str
    ended: tuple[str, ...] = ()  # "alice LIVES_IN Boston", staged prompts only


def shown_memories(prompt: str) -> list[Shown]:
    """The existing memories listed in a memory-update or single-pass prompt."""
    at = prompt.rfind(_MEMORIES)
    if at < 0:
        return []
    try:
        listed, _ = json.JSONDecoder().raw_decode(prompt, at + len(_MEMORIES))
    except ValueError:
        return []
    out = []
    for item in listed if isinstance(listed, list) else []:
        if isinstance(item, dict) and isinstance(item.get("text"), str):
            ended = item.get("no_longer_true") or []
            out.append(Shown(str(item.get("id")), item["text"], tuple(str(e) for e in ended)))
    return out


def new_facts(prompt: str) -> list[str] | None:
    """The new facts of a staged memory-update prompt (None: not such a prompt)."""
    if _NEW_FACTS not in prompt:
        return None
    try:
        facts = json.loads(prompt.rsplit(_NEW_FACTS, 1)[1].strip())
    except ValueError:
        return None
    return [f for f in facts if isinstance(f, str)] if isinstance(facts, list) else None


def shown_relations(prompt: str) -> list[Triple]:
    """The relations listed under "Existing relations:" (``- source -- REL -- destination``)."""
    at = prompt.find("Existing relations:")
    if at < 0:
        return []
    section = prompt[at:].split("\n\n", 1)[0]
    return [(s.strip(), r.strip(), d.strip()) for s, r, d in _RELATION_LINE.findall(section)]


def user_name(body: dict[str, Any]) -> str:
    """The scope's own name, as the system prompt names it ("" when it does not)."""
    for message in body.get("messages") or []:
        found = _USER.search(str(message.get("content", ""))) if isinstance(message, dict) else None
        if found:
            return found.group(1)
    return ""


def match_retirements(wanted: Sequence[Triple], shown: Sequence[Triple], user: str) -> tuple[list[Triple], list[str]]:
    """The shown relations the scripted ``wanted`` triples name ("I", "me" and the user's id in any
    case are the user), copied exactly as listed; and why each unmatched one was left out."""
    def key(t: Triple) -> tuple[str, str, str]:
        ends = [canonical_name(user) if is_self(n, user) else canonical_name(n) for n in (t[0], t[2])]
        return ends[0], sanitize_relation_type(t[1]), ends[1]

    by_key = {key(t): t for t in shown}
    matched: list[Triple] = []
    problems: list[str] = []
    for triple in wanted:
        found = by_key.get(key(triple))
        if found is not None:
            matched.append(found)
        elif not shown:
            problems.append(f"retire {list(triple)}: graphmem showed the model no existing relations for this add")
        else:
            listed = "; ".join(" ".join(t) for t in shown)
            problems.append(f"retire {list(triple)}: not one of the existing relations shown to the model ({listed})")
    return matched, problems


def decide(existing: Sequence[Shown], facts: Sequence[str], retired: Sequence[Triple], user: str,
           relations_of: RelationsOf) -> dict[str, Any]:
    """The ``update_memory`` answer of a careful model (module docstring)."""
    known = {m.text.casefold() for m in existing}
    pending = [f for f in dict.fromkeys(facts) if f.casefold() not in known]
    decisions: list[dict[str, Any]] = []
    for memory in existing:
        ended = _ended(memory, retired, user)
        if not ended:
            decisions.append({"id": memory.id, "text": memory.text, "event": "NONE"})
            continue
        replacement = _replacement(memory, ended, pending, relations_of)
        if replacement is None:
            decisions.append({"id": memory.id, "text": memory.text, "event": "DELETE"})
        else:
            pending.remove(replacement)
            decisions.append({"id": memory.id, "text": replacement, "event": "UPDATE", "old_memory": memory.text})
    decisions += [{"id": f"new{i}", "text": f, "event": "ADD"} for i, f in enumerate(pending)]
    return {"memory": decisions}


def _ended(memory: Shown, retired: Sequence[Triple], user: str) -> list[Triple]:
    """The retired relations this memory states: its ``no_longer_true`` list, else (single pass)
    those whose other end than the user it names."""
    if memory.ended:
        return [(m[1], m[2], m[3]) for e in memory.ended if (m := _ENDED.match(e))]
    words = f" {_plain(memory.text)} "
    return [t for t in retired if f" {_plain(t[0] if is_self(t[2], user) else t[2])} " in words]


def _replacement(memory: Shown, ended: list[Triple], facts: list[str], relations_of: RelationsOf) -> str | None:
    """The new fact that says what is true now in place of ``ended``: one whose script asserts the
    same relationship to another value, else one sharing a word with the old memory or relationship."""
    kinds = {sanitize_relation_type(t[1]) for t in ended}
    for fact in facts:
        if any(sanitize_relation_type(r) in kinds and _plain(d) in _plain(fact) for r, d in relations_of(fact)):
            return fact
    old_ends = {w for t in ended for w in _plain(t[2]).split()}
    cues = (set(_plain(memory.text).split()) | {w for k in kinds for w in _plain(k).split()}) - old_ends - _SMALL_WORDS
    best = max(facts, key=lambda f: len(cues & set(_plain(f).split())), default=None)
    return best if best is not None and cues & set(_plain(best).split()) else None


def _plain(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold().replace("_", " ")))
