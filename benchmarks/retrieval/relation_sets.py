"""Relation datasets for the leave-one-dataset-out report, all as ``graph_data.UserGraph`` scopes
with gold relation ids, so one runner asks them all through the same path:

- ``own``: the team's generated personal graphs (benchmarks.graph_data, dev phrasings);
- ``personas``: hand-written personal graphs with first-person questions (../shared/data/personas,
  or any file in its format: kinds para / ctrl / past / other);
- ``pathquestion``: named two- and three-hop questions over a Freebase subset
  (../shared/data/pathquestion-large, or any folder in its format: ``PQL-2H.txt`` + ``PQL2-KB.txt``,
  ``PQL-3H.txt`` + ``PQL3-KB.txt``; any ``*-2H``/``*-3H`` question file with its KB).

Slices (what a question measures; the metric is hit@k of the whole gold, see graph_retrieval.ranks):
``paraphrase`` (no word shared with the answer), ``shared`` (a word shared), ``as_of`` (a past
version, asked with ``as_of``), ``other`` (a relation between two other people, asked in the first
person), ``multihop`` (the whole gold path, ``hops=2``).
"""

from __future__ import annotations

import json
import random
import re
from datetime import datetime, timezone
from pathlib import Path

from benchmarks.data.graph_data import Question, UserGraph, generate
from graphmem.types import Entity, Relation, canonical_name, new_id

SHARED_DATA = Path(__file__).resolve().parents[3] / "shared" / "data"
PERSONA_SLICES = {"para": "paraphrase", "ctrl": "shared", "past": "as_of", "other": "other"}
#: the start of relations "always true" (valid_at null), and their creation time (the same day: the
#: fact states no time, as for an add that was told none)
EPOCH = datetime(2000, 1, 1, tzinfo=timezone.utc)


def _date(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value).replace(tzinfo=timezone.utc) if value else None


class _Graph:
    def __init__(self, user_id: str) -> None:
        self.g = UserGraph(user_id)
        self.by_triple: dict[tuple[str, str, str], str] = {}

    def entity(self, name: str, entity_type: str | None) -> Entity:
        key = canonical_name(name)
        found = self.g.entities.get(key)
        if found is None:
            found = self.g.entities[key] = Entity(new_id(), name, key, entity_type or "entity", 1, EPOCH, EPOCH)
        return found

    def relate(self, source: Entity, rel: str, dest: Entity, valid_at: datetime | None, invalid_at: datetime | None) -> None:
        valid_at = valid_at or EPOCH  # "always true": valid from long ago, so a question about the past sees it too
        r = Relation(new_id(), source.id, source.name, rel, dest.id, dest.name, valid_at, invalid_at, created_at=valid_at,
                     expired_at=invalid_at, source_type=source.entity_type, destination_type=dest.entity_type)
        self.g.relations.append(r)
        self.by_triple[(canonical_name(source.name), rel, canonical_name(dest.name))] = r.id

    def gold(self, source: str, rel: str, dest: str) -> str:
        return self.by_triple[(canonical_name(source), rel, canonical_name(dest))]


def personas(path: Path | None = None) -> list[UserGraph]:
    data = json.loads((path or SHARED_DATA / "personas" / "personas.json").read_text())
    graphs = []
    for p in data["personas"]:
        b = _Graph(p["user_id"])
        for r in p["relations"]:
            b.relate(b.entity(r["source"], r.get("source_type")), r["relationship"], b.entity(r["destination"], r.get("destination_type")),
                     _date(r.get("valid_at")), _date(r.get("invalid_at")))
        for q in p["questions"]:
            as_of = _date(q.get("as_of"))
            b.g.questions.append(Question(q["question"], p["user_id"], PERSONA_SLICES.get(q["kind"], q["kind"]), [b.gold(*q["gold"])],
                                          q.get("subkind", q["kind"]), as_of=as_of))
        graphs.append(b.g)
    return graphs


def relation_type(path: str) -> str:
    """A Freebase path as the type an extractor would write: its last segment, upper snake case,
    with the segment before it when the last one only names a domain ("__film__cinematographer__film"
    -> CINEMATOGRAPHER_FILM)."""
    parts = [p for p in path.split("__") if p]
    last = parts[-1:]
    if len(parts) > 1 and parts[-1] == parts[0]:
        last = parts[-2:]
    return re.sub(r"[^A-Za-z0-9]+", "_", "_".join(last)).strip("_").upper()


def _name(kb_name: str) -> str:
    return kb_name.replace("_", " ").strip()


def _question_text(text: str) -> str:
    """The template's text as a person would type it: spaces for underscores, no space before
    "?" or "'s"."""
    text = text.replace("_", " ").replace(" 's", "'s").replace(" ?", "?")
    return re.sub(r"\s+", " ", text).strip()


def pathquestion(folder: Path | None = None, per_file: int = 150, seed: int = 7) -> list[UserGraph]:
    """One scope per KB (the user id names it), ``per_file`` questions sampled from each question file."""
    folder = folder or SHARED_DATA / "pathquestion-large"
    graphs = []
    for qfile in sorted(folder.glob("*-[23]H.txt")):
        hops = qfile.stem[-2]
        kb = next(iter(sorted(folder.glob(f"*{hops}-KB.txt"))), None)
        if kb is None:
            continue
        b = _Graph(f"pq{hops}h")
        for line in kb.read_text().splitlines():
            cells = [c for c in line.split("\t") if c.strip()]
            if len(cells) == 3:
                s, r, o = (c.strip() for c in cells)
                key = (canonical_name(_name(s)), relation_type(r), canonical_name(_name(o)))
                if key not in b.by_triple:
                    b.relate(b.entity(_name(s), None), relation_type(r), b.entity(_name(o), None), None, None)
        lines = [line.split("\t") for line in qfile.read_text().splitlines() if line.strip()]
        rng = random.Random(f"{seed}-{qfile.name}")
        for text, _answer, path in rng.sample(lines, min(per_file, len(lines))):
            steps = path.strip().split("#")
            gold = []
            for i in range(0, len(steps) - 2, 2):
                key = (canonical_name(_name(steps[i])), relation_type(steps[i + 1]), canonical_name(_name(steps[i + 2])))
                if key in b.by_triple:
                    gold.append(b.by_triple[key])
            if len(gold) == (len(steps) - 1) // 2:
                b.g.questions.append(Question(_question_text(text), b.g.user_id, "multihop", gold, f"{hops}H", hops=2))
        graphs.append(b.g)
    return graphs


def own(users: int = 6, seed: int = 7) -> list[UserGraph]:
    return generate(users, seed, "dev")


DATASETS = {"own": own, "personas": personas, "pathquestion": pathquestion}
