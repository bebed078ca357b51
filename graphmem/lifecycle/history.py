"""The audit log of memory changes: SQLite at ``history_db_path`` with mem0's columns plus scope.

Ordering with the store: rows of an add are staged (committed = 0) before the store write and
committed after it. A crash between the two leaves staged rows; on open they are checked against
the store, which is authoritative: rows whose change is visible in the store are committed, the
rest are dropped. So the log never shows a change the store does not have, and a change the store
has is never missing from the log for longer than until the next start.

A store write whose commit outcome is unknown (the connection died after COMMIT was sent:
WriteOutcomeUnknown) keeps its rows aside (committed = 2) instead of dropping them: they are settled
against the store, by the same rule as the repair, on the next read of a history and when the add
is retried with its idempotency key (``settle``), and at the latest by the repair at the next start.
Rows of adds still in flight (committed = 0) are never settled by a read.

Several processes may share the database (the default path is shared by every process that does
not set one). Rows in flight carry their History's owner token, and each open History holds a lock
that dies with its process (lifecycle/owner_lock.py). The repair, at start or called, resolves only
this History's rows and those of owners no longer alive (rows without an owner, from before owners
were kept, count as a dead owner's): another process's add in flight keeps its staged rows, so its
commit finds them when its store write lands. ``settle`` commits another live owner's set-aside
rows when the store shows their change (a keyed retry here joins its first attempt's rows) and
leaves the others to their owner, whose write may still land; once the owner is gone they are
settled like this History's own. A dead owner's rows are judged against the store of whichever
process repairs them: a store should have its own ``history_db_path``. The lock files of dead
owners without rows in flight are removed at start; ``close`` removes its own.

The log is an audit trail, not the record: once the store write has happened, the add has happened.
So the commit after the write never raises: if it fails (the database locked by another process past
the bounded wait), the add's rows stay staged, are committed again on the next use of the log and at
the latest by the repair at the next start. Every other failure is a StoreError naming the file.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from graphmem.errors import ConfigError, GraphMemError, StorageFullError, StoreError
from graphmem.lifecycle.owner_lock import OwnerLock
from graphmem.results import MemoryEvent
from graphmem.types import MemoryItem, Owners, Scope, iso, new_id, utcnow

_SCHEMA = """
CREATE TABLE IF NOT EXISTS history (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    memory_id TEXT NOT NULL,
    old_memory TEXT,
    new_memory TEXT,
    event TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT,
    is_deleted INTEGER NOT NULL DEFAULT 0,
    actor_id TEXT,
    role TEXT,
    user_id TEXT,
    agent_id TEXT,
    run_id TEXT,
    add_id TEXT,
    committed INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS history_memory_id ON history (memory_id);
CREATE INDEX IF NOT EXISTS history_scope ON history (user_id, agent_id, run_id);
CREATE INDEX IF NOT EXISTS history_pending ON history (committed) WHERE committed = 0;
CREATE INDEX IF NOT EXISTS history_unknown ON history (committed) WHERE committed = 2;
"""

#: Columns added after a history database may have been made (migrated on open, NULL in old rows):
#: the add id of a row (provenance reads an add's rows by it), the expiry of retention.
#: the owner token of a row in flight (lifecycle/owner_lock.py; NULL in older rows: a dead owner's).
_LATER_COLUMNS = (("add_id", "TEXT"), ("expires_at", "TEXT"), ("owner", "TEXT"))
#: Indexes on those columns, made once they exist (``provenance(add_id)`` reads by add id).
_LATER_INDEXES = "CREATE INDEX IF NOT EXISTS history_add_id ON history (add_id);"


def sortable_time(value: datetime | None) -> str | None:
    """UTC with a fixed width (microseconds always written), so SQLite compares the text in time order."""
    return None if value is None else value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _scope_where(scope: Scope) -> tuple[str, list[str]]:
    """Rows written with the scope's ids (an id the scope leaves out matches any value)."""
    parts = [(f"{key} = ?", value) for key, value in scope.properties().items() if value is not None]
    return " AND ".join(p for p, _ in parts), [v for _, v in parts]


log = logging.getLogger(__name__)

#: Seconds a write waits for another process's lock on the history database before it fails.
LOCK_TIMEOUT = 5.0

COLUMNS = ("id", "memory_id", "old_memory", "new_memory", "event", "created_at", "updated_at", "is_deleted", "actor_id", "role", "user_id", "agent_id", "run_id")
#: What a read returns of a row: mem0's columns and the scope, then the id of the add (or update or
#: delete) that made it (None for rows imported from mem0 or written before add ids were kept)
SHOWN = (*COLUMNS, "add_id")


@dataclass
class HistoryEvent:
    memory_id: str
    event: MemoryEvent
    old_memory: str | None
    new_memory: str | None
    role: str | None = None
    actor_id: str | None = None
    expires_at: str | None = None  # retention: the memory's rows are hidden from then on, removed by purge


class History:
    def __init__(self, path: Path | str, lock_timeout: float | None = None) -> None:
        self.path = Path(path).expanduser() if str(path) != ":memory:" else path
        self.lock_timeout = LOCK_TIMEOUT if lock_timeout is None else lock_timeout
        self._uncommitted: list[str] = []  # add ids written to the store whose commit here failed
        self._pending_lock = threading.Lock()
        try:
            if isinstance(self.path, Path):
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), timeout=self.lock_timeout, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: a commit is not fsynced (the WAL is, at checkpoints). A process crash loses
            # nothing and never corrupts the file; an OS crash or power cut can lose the newest
            # commits. The store is the record (staged rows are repaired at start): FULL cost an add
            # 4.4 ms p50 / 8.8 ms p95 here for two fsyncs, NORMAL 0.08 ms.
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute("PRAGMA secure_delete=ON")  # erased rows are overwritten, not left in free pages
            self._db.executescript(_SCHEMA)
            _migrate(self._db)
            self._db.execute("BEGIN IMMEDIATE")  # proves the file is writable now, not at the first add
            self._db.execute("ROLLBACK")
            self._owner = OwnerLock(self.path)  # after the database: a file that cannot open takes no lock
        except sqlite3.OperationalError as exc:
            if _is_locked(exc):
                raise StoreError(self._locked_message()) from exc
            raise ConfigError(f"history_db_path {self.path} cannot be opened for writing: {exc}") from exc
        except (sqlite3.Error, OSError) as exc:
            raise ConfigError(f"history_db_path {self.path} cannot be opened for writing: {exc}") from exc
        self._lock = threading.Lock()

    def _locked_message(self) -> str:
        return f"the history database {self.path} is locked by another process (waited {self.lock_timeout:g} s)"

    @contextmanager
    def _using(self) -> Iterator[sqlite3.Connection]:
        """The connection under the lock, with SQLite's errors as StoreErrors."""
        with self._lock:
            try:
                yield self._db
            except sqlite3.OperationalError as exc:
                if _is_locked(exc):
                    raise StoreError(self._locked_message()) from exc
                if _is_full(exc):
                    raise StorageFullError(f"the disk holding the history database {self.path} is full; nothing was "
                                           "written (delete and forget still work to free space)") from exc
                raise StoreError(f"the history database {self.path} failed: {exc}") from exc
            except sqlite3.Error as exc:
                raise StoreError(f"the history database {self.path} failed: {exc}") from exc

    def stage(self, add_id: str, scope: Scope, events: list[HistoryEvent]) -> None:
        self.stage_many([(add_id, scope, events)])

    def stage_many(self, adds: list[tuple[str, Scope, list[HistoryEvent]]]) -> None:
        """``stage`` for several adds (add_id, scope, events) in one SQLite transaction (bulk imports)."""
        now = iso(utcnow())
        rows = [
            (new_id(), e.memory_id, e.old_memory, e.new_memory, e.event, now, now, int(e.event == "DELETE"), e.actor_id, e.role,
             scope.user_id, scope.agent_id, scope.run_id, add_id, e.expires_at, self._owner.token)
            for add_id, scope, events in adds
            for e in events
        ]
        if not rows:
            return
        self._retry_commits()
        with self._using() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                db.executemany(
                    f"INSERT INTO history ({', '.join(COLUMNS)}, add_id, expires_at, owner, committed) "
                    f"VALUES ({', '.join('?' * (len(COLUMNS) + 3))}, 0)",
                    rows,
                )
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:  # SQLite ends the transaction itself on some errors (a full disk)
                    db.execute("ROLLBACK")
                raise

    def commit_many(self, add_ids: list[str]) -> None:
        """``commit`` for several adds in one statement ("committed = 0" lets SQLite use the partial
        index of pending rows instead of scanning the table). Never raises."""
        try:
            with self._using() as db:
                db.execute("UPDATE history SET committed = 1 WHERE committed = 0 AND add_id IN (SELECT value FROM json_each(?))",
                           (json.dumps(add_ids),))
        except StoreError:
            for add_id in add_ids:
                self.commit(add_id)

    def discard_many(self, add_ids: list[str]) -> None:
        for add_id in add_ids:
            self.discard(add_id)

    def commit(self, add_id: str) -> None:
        """Mark an add's staged rows as done. Never raises: the store already holds the change."""
        with self._pending_lock:
            self._uncommitted.append(add_id)
        self._retry_commits()

    def _retry_commits(self) -> None:
        with self._pending_lock:
            waiting = list(self._uncommitted)
        for add_id in waiting:
            try:
                with self._using() as db:
                    db.execute("UPDATE history SET committed = 1 WHERE committed = 0 AND add_id = ?", (add_id,))  # pending-rows index
            except StoreError as exc:
                log.warning("history rows of add %s stay staged for now (retried on next use, repaired at start-up): %s", add_id, exc)
                return
            with self._pending_lock:
                if add_id in self._uncommitted:
                    self._uncommitted.remove(add_id)

    def discard(self, add_id: str) -> None:
        """Drop an add's staged rows after a failed store write; best effort (repair drops them too)."""
        try:
            with self._using() as db:
                db.execute("DELETE FROM history WHERE add_id = ? AND committed = 0", (add_id,))
        except StoreError as exc:
            log.warning("history rows of failed add %s stay staged until the next start's repair: %s", add_id, exc)

    def set_aside(self, add_id: str) -> None:
        """An add's staged rows whose store write has an unknown outcome: kept for ``settle``. Best
        effort: rows left staged are settled by the next start's repair all the same."""
        try:
            with self._using() as db:
                db.execute("UPDATE history SET committed = 2 WHERE committed = 0 AND add_id = ?", (add_id,))
        except StoreError as exc:
            log.warning("history rows of add %s stay staged until the next start's repair: %s", add_id, exc)

    def settle(self, lookup: Callable[[str], MemoryItem | None]) -> int:
        """Settle the rows set aside by writes of unknown outcome against the store (when it answers:
        otherwise they wait for the next call); returns how many were kept. Rows of another open
        History are only committed when the store shows them (a keyed retry here joins the first
        attempt's rows); one not shown is left to its owner, whose write may still land."""
        with self._using() as db:
            if db.execute("SELECT 1 FROM history WHERE committed = 2 LIMIT 1").fetchone() is None:
                return 0
        try:
            return self._resolve(lookup, (2,), adopt=True)
        except GraphMemError as exc:  # the store is still away: settled on a later read or start
            log.info("history rows of writes with an unknown outcome wait for the store: %s", exc)
            return 0

    def resolve(self, add_id: str, lookup: Callable[[str], MemoryItem | None]) -> bool:
        """Read an add of unknown outcome back at once: True (its rows committed) when the store
        answers and shows every change of it; otherwise its rows stay aside for ``settle`` (the
        store is away, or the commit could still land: a row is only dropped by a later settle)."""
        with self._using() as db:
            rows = db.execute("SELECT seq, memory_id, event, new_memory FROM history WHERE committed = 2 AND add_id = ?",
                              (add_id,)).fetchall()
        try:
            if not rows or not all(_visible(lookup(memory_id), event, text) for _, memory_id, event, text in rows):
                return False
        except GraphMemError as exc:
            log.info("write %s has an unknown outcome and the store does not answer yet: %s", add_id, exc)
            return False
        with self._using() as db:
            db.executemany("UPDATE history SET committed = 1 WHERE seq = ?", [(seq,) for seq, *_ in rows])
        return True

    def repair(self, lookup: Callable[[str], MemoryItem | None], states: tuple[int, ...] = (0, 2)) -> int:
        """Resolve rows left staged by a crash, or set aside, against the store; returns how many were
        kept. Only this History's rows and those of owners no longer alive: another open History's
        are its own (staged: its add is in flight, its store write may land after this reads)."""
        return self._resolve(lookup, states, adopt=False)

    def _resolve(self, lookup: Callable[[str], MemoryItem | None], states: tuple[int, ...], adopt: bool) -> int:
        """Rows of ``states`` whose owner is this History or dead: committed when the store shows
        their change, else dropped. ``adopt``: set-aside rows of a live owner are committed when shown."""
        marks = ", ".join(str(int(state)) for state in states)
        with self._using() as db:
            pending = db.execute(f"SELECT seq, memory_id, event, new_memory, committed, owner FROM history "
                                 f"WHERE committed IN ({marks})").fetchall()
        owners = {owner for *_, owner in pending} - {self._owner.token}
        others = {owner for owner in owners if self._owner.alive(owner)}  # one probe an owner
        kept = 0
        for seq, memory_id, event, new_memory, state, owner in pending:
            if owner in others and not (adopt and state == 2):
                continue
            visible = _visible(lookup(memory_id), event, new_memory)
            with self._using() as db:
                if visible:
                    db.execute("UPDATE history SET committed = 1 WHERE seq = ?", (seq,))
                    kept += 1
                elif owner not in others:
                    db.execute("DELETE FROM history WHERE seq = ?", (seq,))
        return kept

    def repair_at_start(self, lookup: Callable[[str], MemoryItem | None]) -> None:
        """``repair`` when a Memory opens. On a full disk the rows wait (they stay staged or aside,
        hidden from reads, and are repaired at a later start or settle): a start must not fail, or
        the deletes that free space could not run."""
        try:
            self.repair(lookup)
        except StorageFullError as exc:
            log.warning("history rows left by an interrupted or unknown write wait for room on the disk: %s", exc)
        self._sweep_owners()

    def _sweep_owners(self) -> None:
        """Remove the lock files of dead owners whose rows are all resolved (best effort: a file left
        reads as a dead owner all the same, and the next start tries again)."""
        try:
            with self._using() as db:
                in_flight = {owner for (owner,) in db.execute(
                    "SELECT DISTINCT owner FROM history WHERE committed IN (0, 2) AND owner IS NOT NULL")}
            self._owner.sweep(in_flight)
        except (StoreError, OSError) as exc:
            log.info("lock files of closed history owners stay for a later start: %s", exc)

    def record(self, scope: Scope, events: list[HistoryEvent]) -> None:
        """Stage and commit at once, for changes the store already holds (delete by id)."""
        add_id = new_id()
        self.stage(add_id, scope, events)
        self.commit(add_id)

    def record_imported(self, scope: Scope, events: list[tuple[HistoryEvent, datetime | None]]) -> None:
        """Committed rows for changes made elsewhere (an import from mem0), each at its own time."""
        now = utcnow()
        rows = [
            (new_id(), e.memory_id, e.old_memory, e.new_memory, e.event, iso(at or now), iso(at or now), int(e.event == "DELETE"),
             e.actor_id, e.role, scope.user_id, scope.agent_id, scope.run_id, None)
            for e, at in events
        ]  # fmt: skip
        with self._lock, self._db:
            self._db.execute("BEGIN")
            self._db.executemany(
                f"INSERT INTO history ({', '.join(COLUMNS)}, add_id, committed) VALUES ({', '.join('?' * (len(COLUMNS) + 1))}, 1)", rows
            )
            self._db.execute("COMMIT")

    def history(self, memory_id: str, owners: Owners | None = None) -> list[dict[str, Any]]:
        """A memory's rows, oldest first; ``owners``: only rows of theirs (decided in the query)."""
        self._retry_commits()
        mine, args = _owners_where(owners)
        with self._using() as db:
            rows = db.execute(
                f"SELECT {', '.join(SHOWN)} FROM history WHERE memory_id = ? AND committed = 1 AND {mine} AND NOT EXISTS "
                "(SELECT 1 FROM history AS e WHERE e.memory_id = history.memory_id AND e.expires_at <= ?) ORDER BY seq",
                (memory_id, *args, sortable_time(utcnow())),
            ).fetchall()
        return [dict(zip(SHOWN, row, strict=True), is_deleted=bool(row[7])) for row in rows]

    def of_add(self, scope: Scope, add_id: str) -> list[dict[str, Any]]:
        """The memory events one add wrote in ``scope``'s partition (``Scope.key``: its user whatever
        the agent and run, else its agent without a user, else its run), oldest first: what
        ``Memory.provenance`` shows of an add, read where the store reads its messages and relations."""
        self._retry_commits()
        if scope.user_id is not None:
            where, values = "user_id = ?", [scope.user_id]
        elif scope.agent_id is not None:
            where, values = "user_id IS NULL AND agent_id = ?", [scope.agent_id]
        else:
            where, values = "user_id IS NULL AND agent_id IS NULL AND run_id = ?", [scope.run_id or ""]
        with self._using() as db:
            rows = db.execute(
                f"SELECT {', '.join(SHOWN)} FROM history WHERE add_id = ? AND committed = 1 AND {where} AND NOT EXISTS "
                "(SELECT 1 FROM history AS e WHERE e.memory_id = history.memory_id AND e.expires_at <= ?) ORDER BY seq",
                (add_id, *values, sortable_time(utcnow())),
            ).fetchall()
        return [dict(zip(SHOWN, row, strict=True), is_deleted=bool(row[7])) for row in rows]

    # --- retention and erasure: rows go for good, the audit keeps only that it happened ----------

    def erase_memories(self, memory_ids: list[str], event: str) -> int:
        """Remove every row of these memories; one audit row ``event`` without ids or text."""
        with self._using() as db:
            removed = 0
            for start in range(0, len(memory_ids), 500):
                chunk = memory_ids[start : start + 500]
                marks = ", ".join("?" * len(chunk))
                removed += db.execute(f"DELETE FROM history WHERE memory_id IN ({marks})", chunk).rowcount
        self.audit(event)
        return removed

    def erase_matching(self, scope: Scope, pattern: str, event: str) -> int:
        """Remove the rows of the scope (ids as a read matches them) whose text matches ``pattern``."""
        from graphmem.stores.lifecycle import matches

        where, args = _scope_where(scope)
        with self._using() as db:
            rows = db.execute(f"SELECT seq, old_memory, new_memory FROM history WHERE {where}", args).fetchall()
            gone = [(seq,) for seq, old, new in rows if matches(pattern, old) or matches(pattern, new)]
            db.executemany("DELETE FROM history WHERE seq = ?", gone)
        self.audit(event)
        return len(gone)

    def erase_scope(self, scope: Scope, event: str) -> int:
        where, args = _scope_where(scope)
        with self._using() as db:
            removed = db.execute(f"DELETE FROM history WHERE {where}", args).rowcount
        self.audit(event)
        return removed

    def audit(self, event: str) -> None:
        """Record that an erasure happened (not what), then drop the WAL so no old page survives."""
        with self._using() as db:
            now = iso(utcnow())
            db.execute(
                "INSERT INTO history (id, memory_id, event, created_at, updated_at, is_deleted, committed) VALUES (?, '', ?, ?, ?, 1, 1)",
                (new_id(), event, now, now),
            )
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")

    def reset(self) -> None:
        with self._using() as db:
            db.execute("DELETE FROM history")
        with self._pending_lock:
            self._uncommitted.clear()

    def close(self) -> None:
        self._retry_commits()  # what still fails is committed by the next start's repair
        with self._lock:
            self._db.close()
        self._owner.release()  # rows still staged or aside are now a dead owner's: the next start repairs them


def _migrate(db: sqlite3.Connection) -> None:
    """Bring a history table made by an older graphmem up to date: the columns it lacks are added
    (empty in its rows, which read as written by no known add), then their indexes."""
    present = {row[1] for row in db.execute("PRAGMA table_info(history)")}
    for column, kind in _LATER_COLUMNS:
        if column not in present:
            db.execute(f"ALTER TABLE history ADD COLUMN {column} {kind}")
    db.executescript(_LATER_INDEXES)


def _visible(item: MemoryItem | None, event: str, new_memory: str | None) -> bool:
    """Whether the store shows a history row's change."""
    if event == "DELETE":  # soft (deleted_at set by an add) or for good (delete by id)
        return item is None or item.deleted_at is not None
    return item is not None and item.text == new_memory


_SQLITE_FULL = 13  # SQLite's result code for "database or disk is full"


def _is_full(exc: sqlite3.OperationalError) -> bool:
    return getattr(exc, "sqlite_errorcode", None) == _SQLITE_FULL or "disk is full" in str(exc).lower()


def _is_locked(exc: sqlite3.OperationalError) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _owners_where(owners: Owners | None) -> tuple[str, list[Any]]:
    """Owners' rule (graphmem.types.Owners.admits) as a condition on history rows, with its values."""
    if owners is None:
        return "1", []
    user = "1" if owners.any_user else ("(user_id IN (SELECT value FROM json_each(?)) OR EXISTS (SELECT 1 FROM json_each(?) "
                                        "AS p WHERE substr(history.user_id, 1, length(p.value)) = p.value))")
    args: list[Any] = [] if owners.any_user else [json.dumps(owners.users), json.dumps(owners.prefixes)]
    where = [user]
    for column, value in (("agent_id", owners.agent_id), ("run_id", owners.run_id)):
        if value is not None:
            where.append(f"{column} = ?")
            args.append(value)
    return "(" + " AND ".join(where) + ")", args
