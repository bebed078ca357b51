"""Coverage over redundancy: a multi-part question should get one hit per part in its top k.

Two mechanisms, both arithmetic on the candidates already fetched (no store query, no model call):

- ``question_parts``: a question split without an LLM: on a coordinated pair ("X and Y", "both X
  and Y", "X or Y": one part with X, one with Y, each with the rest of the question), else on
  "and"/"or" between clauses, else, when it names several people or things, one part per name
  (the name plus the question's other words). Each part re-scores BM25 over the same pool; the part rankings are
  interleaved with the whole question's (``interleave``, which leads), so a part whose words are rare in the
  pool is not outvoted by the part whose words fill many turns.
- ``mmr``: maximal marginal relevance over the fused head. Each next pick maximises
  (1 - diversity) x its score (as a share of the best) - diversity x its word overlap (Jaccard of
  BM25 tokens) with what is already picked, so five near-copies of one turn give way to the turn
  that answers the other half. Word overlap stands for the embeddings the stores do not return.
"""

from __future__ import annotations

import math
import re
from collections.abc import KeysView, Sequence
from collections.abc import Set as AbstractSet

from graphmem.retrieval.text import term_counts, tokenize

#: "X and Y", "X or Y", "X, Y": two coordinated words; each part keeps the rest of the question
_PAIR = re.compile(r"\b([\w'-]+),? (?:and|or|as well as|,) ([\w'-]+)\b", re.IGNORECASE)
_CLAUSE = re.compile(r"\s+(?:and|or)\s+", re.IGNORECASE)
_BOTH = re.compile(r"\b(?:both|either)\b\s*", re.IGNORECASE)
_NAME = re.compile(r"\b[A-Z][\w'-]*")
#: capitalised words that open a question or a clause; not names
_NOT_NAMES = frozenset("what when where who whom whose which why how did does do is are was were has have had can could "
                       "would should will i the a an in on at".split())


def question_parts(question: str) -> list[str]:
    """The parts of a multi-part question (an empty list when it has one part).

    Why: "What do Melanie and Caroline both like?" asks about two people; a turn about each is
    evidence, and the whole question's BM25 favours whichever name fills more turns. A part must
    keep a content word of its own ("rock and roll" splits into "rock" and "roll", harmless: the
    whole question's ranking leads the interleaving).
    """
    text = _BOTH.sub("", question)
    for pair in _PAIR.finditer(text):
        if tokenize(pair.group(1)) and tokenize(pair.group(2)):
            return [text[: pair.start()] + side + text[pair.end():] for side in (pair.group(1), pair.group(2))]
    clauses = [c for c in _CLAUSE.split(text) if tokenize(c)]
    if len(clauses) > 1:
        return clauses
    names = _names(question)
    if len(names) < 2:
        return []
    rest = " ".join(t for t in re.findall(r"[\w'-]+", question) if t not in names)
    return [f"{name} {rest}" for name in names]


def _names(question: str) -> list[str]:
    found = [m.group(0) for m in _NAME.finditer(question)]
    return list(dict.fromkeys(n for n in found if n.casefold() not in _NOT_NAMES and not n.isupper() and tokenize(n)))


def interleave(rankings: Sequence[Sequence[str]]) -> list[str]:
    """Round-robin over the rankings (the whole question's first): each round, each ranking gives
    its best id not taken yet, so every part places its best hit as early as the parts allow."""
    out: list[str] = []
    seen: set[str] = set()
    cursors = [0] * len(rankings)
    while True:
        added = False
        for n, ranking in enumerate(rankings):
            while cursors[n] < len(ranking) and ranking[cursors[n]] in seen:
                cursors[n] += 1
            if cursors[n] < len(ranking):
                seen.add(ranking[cursors[n]])
                out.append(ranking[cursors[n]])
                added = True
        if not added:
            return out


def mmr(ids: Sequence[str], scores: Sequence[float], texts: Sequence[str], limit: int, diversity: float) -> list[str]:
    """``ids`` (best first, with their ``scores``) re-ordered by maximal marginal relevance; the
    first ``limit`` picks, then the rest in their order.

    Each pick is the candidate of highest relevance ((1 - diversity) x score / best) less
    ``diversity`` x its largest word overlap with a pick so far; ties go to the earlier candidate.
    The overlaps are compared lazily (``_Picker``): a candidate whose relevance alone is below the
    best value found for this pick cannot win it, so it and every less relevant one are not compared
    with the picks. The same picks as comparing every candidate with every pick (BEAM dev: about 120
    pairs per search instead of the pool's ~70 texts numbered word by word; 2-3x faster)."""
    best = max((s for s in scores), default=0.0)
    if diversity <= 0 or best <= 0 or len(ids) < 2:
        return list(ids)
    picker = _Picker([(1 - diversity) * s / best for s in scores], texts, diversity)
    while len(picker.picked) < min(limit, len(ids)):
        picker.pick()
    taken = set(picker.picked)
    return [ids[i] for i in picker.picked] + [ids[i] for i in range(len(ids)) if i not in taken]


class _Picker:
    """MMR's state: per candidate its largest overlap with the picks compared so far."""

    def __init__(self, relevance: list[float], texts: Sequence[str], diversity: float) -> None:
        self.relevance, self.texts, self.diversity = relevance, texts, diversity
        self.order = sorted(range(len(relevance)), key=lambda j: -relevance[j])  # stable: ties keep their order
        self.words: dict[int, KeysView[str]] = {}
        self.closest = [0.0] * len(relevance)
        self.compared = [0] * len(relevance)  # how many of the picks are in closest[j]
        self.picked: list[int] = []
        self.taken = [False] * len(relevance)

    def pick(self) -> None:
        chosen, top = -1, -math.inf
        for j in self.order:
            if self.taken[j]:
                continue
            if self.relevance[j] < top:
                break  # its value is at most its relevance: neither it nor any later one can win
            value = self.relevance[j] - self.diversity * self._closest(j)
            if value > top or (value == top and j < chosen):
                chosen, top = j, value
        self.picked.append(chosen)
        self.taken[chosen] = True

    def _closest(self, j: int) -> float:
        for p in self.picked[self.compared[j]:]:
            self.closest[j] = max(self.closest[j], _jaccard(self._words(p), self._words(j)))
        self.compared[j] = len(self.picked)
        return self.closest[j]

    def _words(self, i: int) -> KeysView[str]:
        words = self.words.get(i)
        if words is None:
            words = self.words[i] = term_counts(self.texts[i]).keys()  # the distinct words, cached per text
        return words


def _jaccard(a: AbstractSet[str], b: AbstractSet[str]) -> float:
    """Jaccard of two word sets."""
    shared = len(a & b) if len(a) <= len(b) else len(b & a)
    union = len(a) + len(b) - shared
    return shared / union if union else 0.0

