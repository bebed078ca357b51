"""Reading a folder in BEAM's format (mohammadtavakoli78/BEAM, chats/<size>/<N>/chat.json + pq.json):
messages with their batch's date, probing questions with their gold message ids.

A folder is either one conversation (it holds chat.json) or a parent of conversation folders (each
sub-folder that holds chat.json and pq.json, in numeric order). Nothing else is assumed about names.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

#: BEAM's probing abilities, in the order the tables print them
ABILITIES = ("abstention", "contradiction_resolution", "event_ordering", "information_extraction", "instruction_following",
             "knowledge_update", "multi_session_reasoning", "preference_following", "summarization", "temporal_reasoning")
#: a user message's index marker, stripped from the stored text (the data's README)
INDEX_MARKER = re.compile(r"\s*->->\s*\d+\s*,\s*\d+\s*$")


@dataclass
class Message:
    id: int
    role: str
    content: str
    when: datetime | None  # the batch's time anchor (UTC midnight)
    batch: int


@dataclass
class Question:
    ability: str
    question: str
    gold: list[int]
    #: knowledge_update only: the original and the updated statements' ids
    original: list[int] = field(default_factory=list)
    updated: list[int] = field(default_factory=list)


@dataclass
class Conversation:
    name: str
    messages: list[Message]
    questions: list[Question]
    skipped: int = 0  # questions without gold ids (abstention by design, and a few others)


def parse_anchor(text: object) -> datetime | None:
    """"January-05-2024" -> 2024-01-05T00:00Z; None when it does not parse."""
    try:
        return datetime.strptime(str(text).strip(), "%B-%d-%Y").replace(tzinfo=timezone.utc)
    except ValueError:
        return None


def load(folder: str | Path) -> list[Conversation]:
    root = Path(folder)
    if (root / "chat.json").is_file():
        return [_conversation(root)]
    subs = [d for d in root.iterdir() if d.is_dir() and (d / "chat.json").is_file() and (d / "pq.json").is_file()]
    if not subs:
        raise SystemExit(f"{root}: no chat.json here or in its sub-folders")
    return [_conversation(d) for d in sorted(subs, key=lambda d: (not d.name.isdigit(), int(d.name) if d.name.isdigit() else 0, d.name))]


def _conversation(folder: Path) -> Conversation:
    batches = json.loads((folder / "chat.json").read_text())
    messages: list[Message] = []
    for b, batch in enumerate(batches):
        flat = [m for turn in batch.get("turns", []) for m in (turn if isinstance(turn, list) else [turn])]
        anchor = next((parse_anchor(m["time_anchor"]) for m in flat if m.get("time_anchor")), None)
        for m in flat:
            text = INDEX_MARKER.sub("", str(m.get("content", ""))) if m.get("role") == "user" else str(m.get("content", ""))
            if text.strip():
                messages.append(Message(int(m["id"]), str(m.get("role", "user")), text, anchor, int(batch.get("batch_number", b + 1))))
    known = {m.id for m in messages}
    conv = Conversation(folder.name, messages, [])
    probing = json.loads((folder / "pq.json").read_text()) if (folder / "pq.json").is_file() else {}
    for ability, items in probing.items():
        for item in items:
            q = _question(ability, item, known)
            if q is None:
                conv.skipped += 1
            else:
                conv.questions.append(q)
    return conv


def _ids(value: Any) -> list[int]:
    if isinstance(value, dict):
        return [i for v in value.values() for i in _ids(v)]
    if isinstance(value, list):
        return [i for v in value for i in _ids(v)]
    if isinstance(value, int) and not isinstance(value, bool):
        return [value]
    if isinstance(value, str) and value.strip().isdigit():
        return [int(value)]
    return []


def _question(ability: str, item: dict[str, Any], known: set[int]) -> Question | None:
    source = item.get("source_chat_ids")
    gold = list(dict.fromkeys(i for i in _ids(source) if i in known))
    if not gold:
        return None
    q = Question(ability, str(item.get("question", "")), gold)
    if isinstance(source, dict) and "updated_info" in source:
        q.original = [i for i in _ids(source.get("original_info")) if i in known]
        q.updated = [i for i in _ids(source.get("updated_info")) if i in known]
    return q
