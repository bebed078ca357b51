"""``graphmem import FILE``: JSONL (one add per line) or LOCOMO-format conversations, through
``Memory.add_many``, with a progress bar, resumable.

JSONL line: {"messages": ..., "user_id"/"agent_id"/"run_id": ..., "metadata"?: {...},
"timestamp"?: ISO-8601, "key"?: str}. Without "key", the idempotency key is a hash of the line
number and the line's text, so running the same file again skips every line already imported.
LOCOMO (a JSON list of samples with "conversation"): one add per turn, "Speaker: text", user_id =
the sample id (or --user), timestamp = the session's date, key = sample id + dia_id.
A line that is not valid JSON is reported as failed; the others are imported.
Ctrl-C: the running batches (or adds) finish, no other starts, and the import stops; a second
Ctrl-C stops reading at once (an add is one transaction either way, so only whole adds are ever
stored, each scope a prefix of its adds).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import signal
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any

from graphmem.errors import InvalidInputError
from graphmem.schema.counts import counted

if TYPE_CHECKING:  # the bulk lane loads the pipeline's dependencies; `graphmem --help` builds this parser without it
    from graphmem.ingest.bulk import BulkProgress

FORMATS = ("auto", "jsonl", "locomo")


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "import", help="bulk-import a JSONL or LOCOMO file",
        description="Import FILE through Memory.add_many: JSONL (one add per line: messages, user_id/agent_id/run_id, "
                    "metadata, timestamp, key) or LOCOMO conversations (one add per turn). Resumable: lines imported "
                    "before are skipped. Adds of different scopes run concurrently, each scope in order.")
    p.add_argument("file", type=Path, help="the file to import")
    p.add_argument("--format", choices=FORMATS, default="auto", help="file format (default: by content)")
    p.add_argument("--infer", action=argparse.BooleanOptionalAction, default=True,
                   help="extract with the LLM (--infer, default) or store messages verbatim (--no-infer)")
    p.add_argument("--batch-size", type=int, help="adds per transaction with --no-infer (default: config bulk.batch_size)")
    p.add_argument("--workers", type=int, help="scopes imported at once: --infer adds, or --no-infer lanes of batches "
                                                "(default: config bulk.workers)")
    p.add_argument("--user", dest="locomo_user", help="LOCOMO: user id for every conversation (default: its sample_id)")
    p.add_argument("--progress", choices=["auto", "bar", "lines", "off"], default="auto",
                   help="auto: a bar on a terminal, nothing otherwise; lines: one line per update on stderr")
    p.add_argument("--quiet", action="store_true", help="no progress and no summary line")
    p.add_argument("--config", type=Path, help="JSON config file (default: $GRAPHMEM_CONFIG, ./graphmem.json, $GRAPHMEM_HOME/config.json)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def read_items(path: Path, fmt: str = "auto", user_id: str | None = None) -> tuple[int, Iterator[Any]]:
    """(number of adds, the items) for ``path``."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInputError(f"cannot read {path}: {exc}") from exc
    if fmt == "auto":
        fmt = "locomo" if text.lstrip().startswith("[") else "jsonl"
    if fmt == "locomo":
        items = locomo_items(text, user_id)
        return len(items), iter(items)
    lines = text.splitlines()
    return sum(1 for line in lines if line.strip()), jsonl_items(lines)


def jsonl_items(lines: list[str]) -> Iterator[Any]:
    from graphmem.ingest.bulk import BadItem

    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        key = "jsonl:" + hashlib.sha256(f"{number}\n{line.strip()}".encode()).hexdigest()[:32]
        try:
            item = json.loads(line)
        except ValueError as exc:
            yield BadItem(f"line {number}: not JSON ({exc})", key)
            continue
        if isinstance(item, dict):
            item.setdefault("key", key)
        yield item


def locomo_items(text: str, user_id: str | None) -> list[dict[str, Any]]:
    try:
        samples = json.loads(text)
    except ValueError as exc:
        raise InvalidInputError(f"not a LOCOMO file (JSON list of samples): {exc}") from exc
    if not isinstance(samples, list) or not all(isinstance(s, dict) and isinstance(s.get("conversation"), dict) for s in samples):
        raise InvalidInputError("not a LOCOMO file: expected a JSON list of samples with a 'conversation' object")
    items = []
    for sample in samples:
        conv, sample_id = sample["conversation"], str(sample.get("sample_id", ""))
        sessions = sorted(int(k.split("_")[1]) for k in conv if k.startswith("session_") and k.split("_")[1].isdigit()
                          and k.count("_") == 1)
        for n in sessions:
            when = _session_time(conv.get(f"session_{n}_date_time"))
            for turn in conv.get(f"session_{n}") or []:
                text_ = str(turn.get("text", "")).strip()
                if not text_:
                    continue
                dia_id = str(turn.get("dia_id", ""))
                items.append({
                    "messages": [{"role": "user", "content": f"{turn.get('speaker', '')}: {text_}"}],
                    "user_id": user_id or sample_id, "timestamp": when,
                    "metadata": {"speaker": turn.get("speaker"), "session": n, "dia_id": dia_id},
                    "key": f"locomo:{sample_id}:{dia_id}:{hashlib.sha256(text_.encode()).hexdigest()[:12]}",
                })  # fmt: skip
    return items


def _session_time(text: Any) -> str | None:
    from datetime import datetime, timezone

    try:
        return datetime.strptime(" ".join(str(text).split()), "%I:%M %p on %d %B, %Y").replace(tzinfo=timezone.utc).isoformat()
    except ValueError:
        return None


class Progress:
    """A tqdm bar (counts, rate, ETA), plain lines, or nothing."""

    def __init__(self, mode: str, total: int) -> None:
        if mode == "auto":
            mode = "bar" if sys.stderr.isatty() else "off"
        self.mode, self.total, self.started = mode, total, time.perf_counter()
        self.bar: Any = None
        if mode == "bar":
            from tqdm import tqdm  # type: ignore[import-untyped]  # tqdm ships no types

            self.bar = tqdm(total=total, unit="add", file=sys.stderr, dynamic_ncols=True)

    def __call__(self, p: BulkProgress) -> None:
        done = p.added + p.skipped + p.failed
        if self.bar is not None:
            self.bar.n = done
            self.bar.set_postfix(msgs=p.messages, skipped=p.skipped, failed=p.failed, refresh=False)
            self.bar.refresh()
        elif self.mode == "lines":
            rate = p.messages / max(time.perf_counter() - self.started, 1e-9)
            print(f"imported {p.added} skipped {p.skipped} failed {p.failed} of {self.total} ({rate:.0f} msg/s)",
                  file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def run(ns: argparse.Namespace, config: dict[str, Any] | None) -> int:
    from graphmem.memory import Memory

    total, items = read_items(ns.file, ns.format, ns.locomo_user)
    stop = threading.Event()
    progress = Progress("off" if ns.quiet else ns.progress, total)
    previous = signal.getsignal(signal.SIGINT)

    def interrupted(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()  # finish the running batch, then stop

    signal.signal(signal.SIGINT, interrupted)
    started = time.perf_counter()
    try:
        with Memory(config) as memory:
            result = memory.add_many(items, infer=ns.infer, batch_size=ns.batch_size, workers=ns.workers, progress=progress, stop=stop)
    finally:
        signal.signal(signal.SIGINT, previous)
        progress.close()
    seconds = time.perf_counter() - started
    result["seconds"] = round(seconds, 3)
    result["messages_per_second"] = round(result["messages"] / max(seconds, 1e-9), 1)
    if ns.json:
        print(json.dumps(result, ensure_ascii=False))
    elif not ns.quiet:
        print(f"imported {counted(result['added'], 'add')} ({counted(result['messages'], 'message')}, {result['messages_per_second']} msg/s), "
              f"skipped {result['skipped']} imported before, {len(result['failed'])} failed"
              + ("; interrupted: run again to continue" if result["stopped"] else ""), file=sys.stderr)
        for failure in result["failed"][:20]:
            print(f"  item {failure['index']}: {failure['error']}", file=sys.stderr)
    if result["stopped"]:
        return 130
    return 1 if result["failed"] else 0
