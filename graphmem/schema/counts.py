"""Counts in words for what graphmem prints: "1 relation", "2 relations", "1 memory", "3 memories"."""

from __future__ import annotations


def counted(n: int, noun: str) -> str:
    """``n`` and ``noun`` (singular, may be several words: "current relation"), plural unless n is 1."""
    if n == 1:
        return f"{n} {noun}"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return f"{n} {noun[:-1]}ies"
    return f"{n} {noun}{'es' if noun.endswith(('s', 'sh', 'ch', 'x')) else 's'}"
