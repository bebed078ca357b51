"""Words a model uses for the speaker, resolved to the scope's own node in every stage.

Prompts ask the model to copy the user's listed name, but models also answer "I", "me", "the
user", the prompt's placeholder "USER_ID" or the id in another letter case. Extraction, invalidation
and memory update all read names through this one module, so a self-reference means the same node
whichever stage wrote it (an invalidation naming "I" retires the user's relation, as extraction's
"I" created it).
"""

from __future__ import annotations

import re

from graphmem.types import canonical_name

#: canonical forms (see canonical_name: case-folded, underscores as spaces) of the speaker's words
SELF_WORDS = frozenset({"i", "me", "my", "mine", "myself", "user", "the user", "self", "speaker", "user id", "the speaker"})

_PLACEHOLDER = re.compile(r"\bUSER_ID\b", re.IGNORECASE)


def is_self(name: str, self_name: str) -> bool:
    """True when ``name`` is the speaker: a self word, or the scope's own id in any letter case."""
    key = canonical_name(name)
    return key in SELF_WORDS or (bool(key) and key == canonical_name(self_name))


def self_key(name: str, self_name: str) -> str:
    """The matching key of ``name``, the scope's own key when it is a self-reference."""
    return canonical_name(self_name) if is_self(name, self_name) else canonical_name(name)


def name_self(text: str, self_name: str) -> str:
    """Free text with the prompt's placeholder ``USER_ID`` replaced by the user's name (a memory
    written as "USER_ID moved to Denver" then mentions the user's node like any other name)."""
    return _PLACEHOLDER.sub(lambda _: self_name, text) if self_name else text
