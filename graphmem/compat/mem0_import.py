"""Import what mem0 remembered: its history.db (SQLite, table ``history``) and, where given, the
memories it exported (``m.get_all(...)`` saved as JSON), into a graphmem store.

mem0's history rows carry no user id, so the scope of a memory comes from the exported JSON, else
from the ids given to the import. Memories keep their mem0 ids, texts, metadata and times (the
memory's event time is its mem0 ``created_at``); their history rows are copied with their original
times. A memory whose last history event is DELETE is imported soft-deleted, so ``history(id)``
still tells its story. Memories whose id the store already holds are skipped, so an import can be
re-run. The graph is rebuilt only with ``reextract=True``: each live memory then goes through the
graph-extraction stage (LLM calls), in the memory's own time.
"""

from __future__ import annotations

import argparse
import json
import sqlite3
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphmem.errors import InvalidInputError
from graphmem.lifecycle.history import HistoryEvent
from graphmem.results import MEMORY_EVENTS, MemoryEvent
from graphmem.schema.counts import counted
from graphmem.stages.conversation import Message
from graphmem.types import GraphWrite, MemoryWrite, Scope, new_id, parse_time, utcnow

if TYPE_CHECKING:
    from graphmem.memory import Memory

MEM0_COLUMNS = ("id", "memory_id", "old_memory", "new_memory", "event", "created_at", "updated_at", "is_deleted", "actor_id", "role")
BATCH = 256


@dataclass
class Mem0Memory:
    id: str
    text: str
    scope: Scope
    metadata: dict[str, Any] = field(default_factory=dict)
    created_at: datetime | None = None
    deleted: bool = False
    role: str | None = None
    history: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class ImportReport:
    imported: int = 0
    deleted: int = 0  # imported soft-deleted (their last event was DELETE)
    skipped: int = 0  # already in the store
    history_rows: int = 0
    reextracted: int = 0

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


def read_history(path: str | Path) -> dict[str, list[dict[str, Any]]]:
    """mem0's history rows by memory id, oldest first; InvalidInputError when it is not one."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise InvalidInputError(f"no mem0 history database at {path}")
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
            found = {row[1] for row in db.execute("PRAGMA table_info(history)")}
            missing = [c for c in MEM0_COLUMNS if c not in found]
            if missing:
                raise InvalidInputError(f"{path} has no mem0 history table (missing columns: {', '.join(missing)})")
            rows = db.execute(f"SELECT {', '.join(MEM0_COLUMNS)} FROM history ORDER BY created_at, rowid").fetchall()
    except sqlite3.Error as exc:
        raise InvalidInputError(f"cannot read {path} as a mem0 history database: {exc}") from exc
    out: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        item = dict(zip(MEM0_COLUMNS, row, strict=True))
        if isinstance(item["memory_id"], str) and item["memory_id"]:
            out.setdefault(item["memory_id"], []).append(item)
    return out


def read_exported(path: str | Path) -> list[dict[str, Any]]:
    """Memories as mem0's get_all returns them: {"results": [...]} or a bare list."""
    try:
        data = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidInputError(f"cannot read exported memories {path}: {exc}") from exc
    items = data.get("results") if isinstance(data, dict) else data
    if not isinstance(items, list) or not all(isinstance(i, dict) and isinstance(i.get("id"), str) for i in items):
        raise InvalidInputError(f"{path}: expected a list of memories with ids (mem0's get_all result)")
    return items


def collect(history: dict[str, list[dict[str, Any]]], exported: list[dict[str, Any]], default: Scope | None) -> list[Mem0Memory]:
    """One Mem0Memory per memory id known to either source (exported ones first, in their order)."""
    out: list[Mem0Memory] = []
    for item in exported:
        text = item.get("memory") or item.get("text")
        if not isinstance(text, str) or not text.strip():
            continue
        ids = {k: item.get(k) for k in ("user_id", "agent_id", "run_id")}
        scope = Scope.of(**ids) if any(ids.values()) else _default(default, item["id"])
        metadata: dict[str, Any] = item["metadata"] if isinstance(item.get("metadata"), dict) else {}
        created = parse_time(item.get("created_at"), field_name="created_at") if item.get("created_at") else None
        out.append(Mem0Memory(item["id"], text.strip(), scope, metadata, created, role=item.get("role"), history=history.get(item["id"], [])))
    known = {m.id for m in out}
    for memory_id, rows in history.items():
        if memory_id in known:
            continue
        last = rows[-1]
        texts = [r["new_memory"] or r["old_memory"] for r in rows if r["new_memory"] or r["old_memory"]]
        if not texts:
            continue
        deleted = str(last["event"]).upper() == "DELETE" or bool(last["is_deleted"])
        created = _time(rows[0]["created_at"])
        out.append(Mem0Memory(memory_id, texts[-1], _default(default, memory_id), {}, created, deleted, rows[-1]["role"], rows))
    return out


def _default(scope: Scope | None, memory_id: str) -> Scope:
    if scope is None:
        raise InvalidInputError(f"memory {memory_id} has no user_id/agent_id/run_id: give the import one (--user-id)")
    return scope


def _time(value: Any) -> datetime | None:
    try:
        return parse_time(value) if value else None
    except InvalidInputError:
        return None


def _batches(items: list[Mem0Memory]) -> Iterator[list[Mem0Memory]]:
    for start in range(0, len(items), BATCH):
        yield items[start : start + BATCH]


def import_mem0(
    memory: Memory,
    history_db: str | Path,
    memories_json: str | Path | None = None,
    *,
    user_id: str | None = None,
    agent_id: str | None = None,
    run_id: str | None = None,
    reextract: bool = False,
) -> ImportReport:
    """Copy a mem0 store's memories and history into ``memory`` (see the module docstring)."""
    default = Scope.of(user_id, agent_id, run_id) if (user_id or agent_id or run_id) else None
    items = collect(read_history(history_db), read_exported(memories_json) if memories_json else [], default)
    report = ImportReport()
    fresh = []
    for item in items:
        if memory.store.get_memory(item.id) is not None:
            report.skipped += 1
        else:
            fresh.append(item)
    for batch in _batches(fresh):
        vectors = memory.embedder.embed([m.text for m in batch])
        for item, vector in zip(batch, vectors, strict=True):
            _write_one(memory, item, vector, report)
    if reextract:
        for item in fresh:
            if not item.deleted:
                _reextract(memory, item)
                report.reextracted += 1
    return report


def _write_one(memory: Memory, item: Mem0Memory, vector: list[float], report: ImportReport) -> None:
    write = GraphWrite(new_id(), item.scope, utcnow())
    write.memories.append(MemoryWrite("ADD", item.id, item.text, vector, item.metadata, item.role, valid_at=item.created_at))
    if item.deleted:
        write.memories.append(MemoryWrite("DELETE", item.id, invalid_at=_time(item.history[-1]["created_at"]) if item.history else None))
    memory.store.write(write)
    rows = item.history or [{"event": "ADD", "old_memory": None, "new_memory": item.text, "created_at": item.created_at}]
    events = [
        (HistoryEvent(item.id, event, r["old_memory"], r["new_memory"], r.get("role"), r.get("actor_id")), _time(r["created_at"]))
        for r in rows
        if (event := _event(r["event"])) is not None
    ]
    memory.history_log.record_imported(item.scope, events)
    report.imported += 1
    report.deleted += int(item.deleted)
    report.history_rows += len(events)


def _event(value: Any) -> MemoryEvent | None:
    """mem0's event names are graphmem's; anything else (a NONE row) is not a change to copy."""
    text = str(value).upper()
    return next((e for e in MEMORY_EVENTS if e == text), None)


def _reextract(memory: Memory, item: Mem0Memory) -> None:
    """The graph part of an add (no fact extraction: the memory exists), in the memory's own time."""
    when = min(item.created_at, utcnow()) if item.created_at else utcnow()
    outcome = memory._add.plan(item.scope, [Message("user", item.text)], when, {}, graph_only=True)
    memory._commit(outcome)


# --- the CLI command (registered by graphmem.cli.main) ------------------------------------------------


def add_cli(sub: Any, scope_args: Callable[[argparse.ArgumentParser], None]) -> None:
    p = sub.add_parser(
        "import-mem0",
        help="import a mem0 store's memories and history",
        description="Copy the memories and history of a mem0 store (its history.db and, where given, the memories it "
        "exported with get_all, as JSON) into the configured graphmem store. The scope ids name the memories that "
        "carry none. With --reextract, each live memory also goes through graph extraction (LLM calls).",
    )
    p.add_argument("history_db", type=Path, help="mem0's history.db (SQLite)")
    p.add_argument("--memories", type=Path, help="memories exported from mem0 (JSON: get_all's result or its list)")
    p.add_argument("--reextract", action="store_true", help="rebuild the graph from the imported memories (LLM calls)")
    scope_args(p)
    p.add_argument("--config", type=Path, help="JSON config file (default: $GRAPHMEM_CONFIG, ./graphmem.json, $GRAPHMEM_HOME/config.json)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")


def run(ns: argparse.Namespace, config: dict[str, Any] | None) -> int:
    from graphmem.memory import Memory

    with Memory(config) as memory:
        report = import_mem0(
            memory, ns.history_db, ns.memories, user_id=ns.user_id, agent_id=ns.agent_id, run_id=ns.run_id, reextract=ns.reextract
        )
    if ns.json:
        print(json.dumps(report.to_dict()))
    else:
        print(
            f"imported {counted(report.imported, 'memory')} ({report.deleted} deleted ones kept for history), "
            f"{counted(report.history_rows, 'history row')}; skipped {report.skipped} already present; re-extracted {report.reextracted}"
        )
    return 0
