"""Reading a LOCOMO-format file (snap-research/LoCoMo, data/locomo10.json): turns or annotated
observations as documents, QA items with their evidence cleaned, session dates parsed."""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

DIA_ID = re.compile(r"^D(\d+):(\d+)$")
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}


@dataclass
class Document:
    """One thing to remember: a turn, or an annotated observation about a speaker."""

    text: str
    speaker: str
    session: int
    session_date: str  # as written in the data, e.g. "1:56 pm on 8 May, 2023"
    when: datetime | None  # the session date, parsed (UTC)
    dia_ids: list[str]

    def content(self, with_speaker: bool) -> str:
        """What is stored: "Caroline: I went to ..." (how mem0's LOCOMO evaluation feeds turns), or the
        bare text. The words alone do not say who speaks; questions name people."""
        return f"{self.speaker}: {self.text}" if with_speaker else self.text

    def metadata(self) -> dict[str, object]:
        meta: dict[str, object] = {"speaker": self.speaker, "session": self.session, "session_date": self.session_date}
        if len(self.dia_ids) == 1:
            meta["dia_id"] = self.dia_ids[0]
        else:
            meta["dia_ids"] = self.dia_ids
        return meta


@dataclass
class Question:
    question: str
    category: int
    evidence: list[str]  # valid dia_ids of turns that exist; empty: the item is skipped


@dataclass
class Conversation:
    sample_id: str
    speakers: list[str]
    sessions: list[list[Document]]  # turns, one list per session, in order
    observations: list[list[Document]]
    questions: list[Question]
    evidence_issues: Counter = field(default_factory=Counter)  # ok / partial / malformed / empty


def parse_session_date(text: str) -> datetime | None:
    """"1:56 pm on 8 May, 2023" -> 2023-05-08T13:56Z; None when it does not parse."""
    try:
        return datetime.strptime(" ".join(text.split()), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc)
    except (ValueError, AttributeError):
        return None


def turn_text(turn: dict, captions: bool) -> str:
    """The turn's words; with ``captions``, a shared image's caption too (it is part of the turn)."""
    text = str(turn.get("text", "")).strip()
    caption = turn.get("blip_caption")
    if captions and caption:
        text = f"{text} [shares {caption}]".strip()
    return text


def load(path: str | Path, captions: bool = True) -> list[Conversation]:
    return [_conversation(sample, captions) for sample in json.loads(Path(path).read_text())]


def _session_numbers(conv: dict) -> list[int]:
    found = (re.fullmatch(r"session_(\d+)", k) for k in conv)
    return sorted(int(m.group(1)) for m in found if m and isinstance(conv[m.group(0)], list))


def _conversation(sample: dict, captions: bool) -> Conversation:
    conv = sample["conversation"]
    sessions, observations = [], []
    for n in _session_numbers(conv):
        date = str(conv.get(f"session_{n}_date_time", ""))
        when = parse_session_date(date)
        sessions.append([
            Document(turn_text(t, captions), t["speaker"], n, date, when, [t["dia_id"]])
            for t in conv[f"session_{n}"] if turn_text(t, captions)
        ])
        notes = (sample.get("observation") or {}).get(f"session_{n}_observation") or {}
        observations.append([
            Document(fact, speaker, n, date, when, _ids(ids))
            for speaker, facts in notes.items() for fact, ids in facts if isinstance(fact, str) and fact.strip()
        ])
    known = {d.dia_ids[0] for s in sessions for d in s}
    result = Conversation(sample["sample_id"], [conv.get("speaker_a", ""), conv.get("speaker_b", "")], sessions, observations, [])
    for qa in sample.get("qa", []):
        evidence, status = clean_evidence(qa.get("evidence"), known)
        result.evidence_issues[status] += 1
        result.questions.append(Question(str(qa.get("question", "")), int(qa.get("category", 0)), evidence))
    return result


def _ids(value: object) -> list[str]:
    items = value if isinstance(value, list) else [value]
    return [i for item in items for i in re.split(r"[;,\s]+", str(item)) if DIA_ID.match(i)]


def clean_evidence(raw: object, known: set[str]) -> tuple[list[str], str]:
    """The evidence ids that are well formed ("D3:12") and name an existing turn.

    Status: "ok" (all usable), "partial" (some entries malformed or dangling, e.g. "D:11:26",
    "D30:05"; a "D8:6; D9:17" entry is split into its two ids), "malformed" (none usable) or
    "empty" (no evidence at all). Items left with no usable id are skipped by the benchmark.
    """
    entries = raw if isinstance(raw, list) else ([] if raw in (None, "") else [raw])
    if not entries:
        return [], "empty"
    good, bad = [], 0
    for entry in entries:
        parts = [p for p in re.split(r"[;,\s]+", str(entry).strip()) if p]
        for part in parts or [""]:
            if DIA_ID.match(part) and part in known:
                good.append(part)
            else:
                bad += 1
    good = list(dict.fromkeys(good))
    if not good:
        return [], "malformed"
    return good, "partial" if bad else "ok"
