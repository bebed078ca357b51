"""Durability for the embedded store: a lock, a snapshot and an append-only journal in one folder.

    <path>/lock            flock'ed exclusively while a store has the folder open
    <path>/snapshot.json   the whole graph as of journal record ``seq`` (replaced atomically)
    <path>/journal.jsonl   one record per change after the snapshot: ``<crc32 hex> <json>\\n``

Each append is written and fsync'ed before the store's method returns, and before the next append
begins, so a crash can only tear the last line; a torn or corrupt last line is dropped (and cut
off) on open, which makes every change whole or absent. Records carry increasing sequence numbers
and the snapshot remembers the last one it contains, so a crash between replacing the snapshot and
truncating the journal never applies a record twice. The file formats are plain JSON: datetimes
are ISO-8601 strings chosen by the caller; a vector (a numpy array in a record or the snapshot) is
written as {"f8": base64 of its little-endian float64 bytes} (format 2): exact, and a fraction of
the cost of 384 JSON floats. Files of format 1 hold vectors as JSON lists; ``as_vector`` reads both.
"""

from __future__ import annotations

import base64
import contextlib
import errno
import fcntl
import json
import os
import zlib
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from graphmem.errors import StorageFullError, StoreError, WriteOutcomeUnknown

LOCK_FILE = "lock"
SNAPSHOT_FILE = "snapshot.json"
JOURNAL_FILE = "journal.jsonl"
SNAPSHOT_VERSION = 2  # 2: vectors packed (see as_vector); 1: vectors as JSON lists, still read
READABLE_SNAPSHOTS = (1, 2)
VECTOR = "f8"

Record = dict[str, Any]


#: errors of a write that found no room: a full disk, a quota, a file size limit
_NO_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})


def _write_error(what: str, exc: OSError, kept: str = "nothing was written") -> StoreError:
    """``kept``: what the failed write leaves in place, said as it is (a record: nothing of it; a
    snapshot: the old snapshot and the journal, so every change)."""
    if exc.errno in _NO_ROOM:
        return StorageFullError(f"{what}: the disk is full ({exc.strerror}); {kept} "
                                "(delete and forget still work to free space)")
    return StoreError(f"{what}: {exc}; {kept}")


def _packed(value: Any) -> Any:
    """json.dumps' hook for what JSON has no type for: a numpy vector, packed."""
    if isinstance(value, np.ndarray):
        return {VECTOR: base64.b64encode(np.ascontiguousarray(value, dtype="<f8").tobytes()).decode("ascii")}
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def as_vector(value: Any) -> np.ndarray:
    """A vector as a float64 array, from a record or snapshot: packed ({"f8": ...}), a JSON list
    (format 1 files) or already an array (a live change)."""
    if isinstance(value, dict):
        return np.frombuffer(base64.b64decode(value[VECTOR], validate=True), dtype="<f8").astype(np.float64)
    return np.asarray(value, dtype=np.float64)


def to_json(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=True, separators=(",", ":"), default=_packed).encode("ascii")


def encode_line(record: Record) -> bytes:
    """One journal line: the CRC-32 of the JSON body in hex, a space, the body, a newline."""
    body = to_json(record)
    return b"%08x %s\n" % (zlib.crc32(body), body)


def decode_line(line: bytes) -> Record | None:
    """The record of one journal line (without its newline), or None when it is torn or corrupt."""
    crc, _, body = line.partition(b" ")
    try:
        if int(crc, 16) != zlib.crc32(body):
            return None
        record = json.loads(body)
    except ValueError:  # bad hex, bad JSON or bad UTF-8
        return None
    if not isinstance(record, dict) or not isinstance(record.get("seq"), int):
        return None
    return record


class Journal:
    """The store folder, locked for one open store at a time.

    Attributes:
        seq: sequence number of the last record written or loaded.
        lines: records in the journal file (a snapshot empties it).
    """

    def __init__(self, path: Path, *, read_only: bool = False) -> None:
        self.path = path
        self.seq = 0
        self.lines = 0
        self.read_only = read_only
        self._fd: int | None = None
        self._lock: BinaryIO | None = None
        if read_only:  # a reader takes no lock: the owner may be running (see load_read_only)
            return
        try:
            path.mkdir(parents=True, exist_ok=True)
            self._lock = open(path / LOCK_FILE, "a+b")  # noqa: SIM115 - held until close()
        except OSError as exc:
            raise StoreError(f"cannot open graph store folder {path}: {exc}") from exc
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            self._lock.close()
            raise StoreError(
                f"graph store {path} is in use by another process (or already open in this one); "
                "close the other store first, read it with the CLI's read commands (read-only), "
                "or run the owner as `graphmem serve` and talk to it over REST"
            ) from exc

    @property
    def journal_path(self) -> Path:
        return self.path / JOURNAL_FILE

    @property
    def snapshot_path(self) -> Path:
        return self.path / SNAPSHOT_FILE

    def load_read_only(self, attempts: int = 20) -> tuple[Record | None, list[Record]]:
        """The last durable state while the owner may be writing: the snapshot and the whole journal
        records newer than it, contiguous from the snapshot on. A torn last line (an append in
        progress) is left out, not cut off; a compaction between the two reads shows as a gap or a
        changed snapshot, and the read starts again."""
        for _ in range(attempts):
            before = self._snapshot_stamp()
            snapshot = self._read_snapshot()
            base = int(snapshot.get("seq", 0)) if snapshot else 0
            records = [r for r in self._read_journal(repair=False) if r["seq"] > base]
            contiguous = all(r["seq"] == base + i for i, r in enumerate(records, start=1))
            if contiguous and self._snapshot_stamp() == before:
                self.seq = records[-1]["seq"] if records else base
                return snapshot, records
        raise StoreError(f"graph store {self.path} changed during every read attempt; try again")

    def _snapshot_stamp(self) -> tuple[int, int] | None:
        try:
            st = os.stat(self.snapshot_path)
        except FileNotFoundError:
            return None
        return st.st_ino, st.st_mtime_ns

    def load(self) -> tuple[Record | None, list[Record]]:
        """Read the snapshot and the journal records newer than it; open the journal for appends."""
        if self.read_only:
            return self.load_read_only()
        snapshot = self._read_snapshot()
        base = int(snapshot.get("seq", 0)) if snapshot else 0
        records = self._read_journal()
        self.lines = len(records)
        self.seq = max([base] + [r["seq"] for r in records])
        created = not self.journal_path.exists()
        try:
            self._fd = os.open(self.journal_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            if created:
                self._fsync_dir()
        except OSError as exc:
            raise StoreError(f"cannot open journal {self.journal_path}: {exc}") from exc
        return snapshot, [r for r in records if r["seq"] > base]

    def append(self, record: Record) -> None:
        """Write one record and fsync it; on failure the journal is left as it was."""
        if self.read_only:
            raise StoreError(f"graph store {self.path} is open read-only; nothing was written")
        assert self._fd is not None, "load() first"
        line = encode_line({**record, "seq": self.seq + 1})
        start = os.fstat(self._fd).st_size
        try:
            view = memoryview(line)
            while view:
                view = view[os.write(self._fd, view) :]
            os.fsync(self._fd)
        except OSError as exc:
            try:  # do not leave half a line for the next append to follow
                os.ftruncate(self._fd, start)
            except OSError as undo:  # the record may be whole on disk: the next start would load it
                raise WriteOutcomeUnknown(
                    f"cannot write journal {self.journal_path}: {exc}; nor remove the record again: {undo}"
                ) from exc
            raise _write_error(f"cannot write journal {self.journal_path}", exc) from exc
        self.seq += 1
        self.lines += 1

    def write_snapshot(self, state: Record) -> None:
        """Replace the snapshot atomically with ``state`` (as of the last record), then empty the journal."""
        assert self._fd is not None, "load() first"
        body = to_json({**state, "version": SNAPSHOT_VERSION, "seq": self.seq})
        tmp = self.path / (SNAPSHOT_FILE + ".tmp")
        try:
            with open(tmp, "wb") as f:
                f.write(body)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.snapshot_path)
            self._fsync_dir()
            os.ftruncate(self._fd, 0)
            os.fsync(self._fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink(missing_ok=True)  # a half-written copy would hold the space a full disk lacks
            raise _write_error(f"cannot write snapshot {self.snapshot_path}", exc,
                               "every change is kept (the journal holds what the snapshot does not)") from exc
        self.lines = 0

    def close(self) -> None:
        """Close the journal and release the lock (idempotent)."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        if self._lock is not None and not self._lock.closed:
            fcntl.flock(self._lock, fcntl.LOCK_UN)
            self._lock.close()

    def _read_snapshot(self) -> Record | None:
        try:
            snapshot = json.loads(self.snapshot_path.read_bytes())
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            raise StoreError(f"cannot read snapshot {self.snapshot_path}: {exc}") from exc
        if not isinstance(snapshot, dict) or snapshot.get("version") not in READABLE_SNAPSHOTS:
            raise StoreError(f"snapshot {self.snapshot_path} has an unknown format")
        return snapshot

    def _read_journal(self, repair: bool = True) -> list[Record]:
        """Every whole record; a torn or corrupt tail is cut off (left alone without ``repair``),
        corruption before good records raises."""
        try:
            data = self.journal_path.read_bytes()
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StoreError(f"cannot read journal {self.journal_path}: {exc}") from exc
        records: list[Record] = []
        good_end, pos, bad_line = 0, 0, None
        for number, line in enumerate(data.split(b"\n"), start=1):
            end = pos + len(line) + 1
            whole = end <= len(data)  # a line without its newline was torn mid-write
            record = decode_line(line) if whole else None
            if record is None:
                if whole or line.strip(b"\0 \t\r"):
                    bad_line = bad_line or number
            elif bad_line is not None:
                raise StoreError(
                    f"journal {self.journal_path} is corrupt at line {bad_line} with good records after it; "
                    "refusing to guess (restore the file or remove the damaged line)"
                )
            else:
                records.append(record)
                good_end = end
            pos = end
        if repair and good_end < len(data):
            self._truncate(good_end)
        return records

    def _truncate(self, size: int) -> None:
        try:
            with open(self.journal_path, "r+b") as f:
                f.truncate(size)
                f.flush()
                os.fsync(f.fileno())
        except OSError as exc:
            raise StoreError(f"cannot repair journal {self.journal_path}: {exc}") from exc

    def _fsync_dir(self) -> None:
        fd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
