"""The embedded store on disk: crashes, torn journal lines, compaction, the folder lock, threads."""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
import sys
import textwrap
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from conftest import ROOT, TEST_DIMS

from graphmem.errors import ConfigError, InvalidInputError, StoreError
from graphmem.stores.base import EntityCandidate
from graphmem.stores.embedded import EmbeddedStore
from graphmem.stores.embedded.journal import JOURNAL_FILE, LOCK_FILE, SNAPSHOT_FILE
from graphmem.types import EntityWrite, GraphWrite, Invalidation, MemoryWrite, RelationWrite, Scope, canonical_name

SCOPE = Scope.of(user_id="alice")
T0 = datetime(2024, 1, 1, 9, 30, 15, 123456, tzinfo=timezone.utc)

# Runs in a child process: ``add(n)`` writes entity "Person n" related to "Hub" at T0 + n minutes.
CHILD_PRELUDE = textwrap.dedent(
    f"""
    import os, sys
    from datetime import datetime, timedelta, timezone
    sys.path.insert(0, {str(ROOT)!r})
    from graphmem.stores.embedded import EmbeddedStore
    from graphmem.types import EntityWrite, GraphWrite, RelationWrite, Scope, canonical_name
    SCOPE = Scope.of(user_id="alice")
    T0 = datetime(2024, 1, 1, 9, 30, 15, 123456, tzinfo=timezone.utc)
    def vec(i):
        v = [0.0] * {TEST_DIMS}
        v[i % {TEST_DIMS}] = 1.0
        return v
    def add(store, n):
        hub = EntityWrite("hub", "Hub", "hub", "place", vec(0), is_new=True)
        person = EntityWrite(f"p{{n}}", f"Person {{n}}", f"person {{n}}", "person", vec(n), is_new=True)
        rel = RelationWrite(person.id, "VISITED", hub.id, T0)
        store.write(GraphWrite(f"add-{{n}}", SCOPE, T0 + timedelta(minutes=n), [hub, person], [rel]))
    """
)


def vec(i: int) -> list[float]:
    v = [0.0] * TEST_DIMS
    v[i % TEST_DIMS] = 1.0
    return v


def add(store: EmbeddedStore, n: int) -> None:
    """The same add as the child's, in this process."""
    hub = EntityWrite("hub", "Hub", "hub", "place", vec(0), is_new=True)
    person = EntityWrite(f"p{n}", f"Person {n}", f"person {n}", "person", vec(n), is_new=True)
    rel = RelationWrite(person.id, "VISITED", hub.id, T0)
    store.write(GraphWrite(f"add-{n}", SCOPE, T0 + timedelta(minutes=n), [hub, person], [rel]))


def crash_after(path: Path, body: str) -> subprocess.CompletedProcess:
    """Run ``body`` in a child with ``store`` open on ``path``, then die without closing it."""
    code = CHILD_PRELUDE + f"store = EmbeddedStore({str(path)!r}, {TEST_DIMS})\n" + textwrap.dedent(body)
    code += "\nsys.stdout.flush()\nos._exit(0)\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done


def people(store: EmbeddedStore) -> list[str]:
    return [e.name for e in store.entities(SCOPE) if e.name != "Hub"]


def journal_lines(path: Path) -> list[bytes]:
    return (path / JOURNAL_FILE).read_bytes().splitlines(keepends=True)


def test_an_add_that_returned_survives_a_crash(tmp_path: Path) -> None:
    crash_after(tmp_path, "for n in range(1, 4):\n    add(store, n)\n")
    assert not (tmp_path / SNAPSHOT_FILE).exists()  # nothing but the journal was written
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        assert people(store) == ["Person 1", "Person 2", "Person 3"]
        hub = store.entities(SCOPE)[0]
        assert hub.mentions == 3 and hub.created_at == T0 + timedelta(minutes=1) and hub.updated_at == T0 + timedelta(minutes=3)
        relations = store.get_all(SCOPE)
        assert [r.provenance for r in relations] == [["add-1"], ["add-2"], ["add-3"]]
        assert all(r.created_at.tzinfo is not None and r.created_at.utcoffset() == timedelta(0) for r in relations)


@pytest.mark.parametrize("damage", ["torn", "bad-checksum", "garbage-tail"])
def test_a_damaged_last_line_is_dropped_and_the_rest_loads(tmp_path: Path, damage: str) -> None:
    crash_after(tmp_path, "for n in range(1, 4):\n    add(store, n)\n")
    lines = journal_lines(tmp_path)
    assert len(lines) == 3
    if damage == "torn":  # the crash hit in the middle of the third append
        lines[-1] = lines[-1][: len(lines[-1]) // 2]
    elif damage == "bad-checksum":
        lines[-1] = lines[-1].replace(b"Person 3", b"Person 9")
    else:
        lines.append(b"\0\0\0\0")
    (tmp_path / JOURNAL_FILE).write_bytes(b"".join(lines))
    expected = ["Person 1", "Person 2"] if damage != "garbage-tail" else ["Person 1", "Person 2", "Person 3"]
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        assert people(store) == expected
        add(store, 4)  # appends after the cut, not after the damage
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        assert people(store) == expected + ["Person 4"]


def test_a_torn_line_is_cut_off_so_later_appends_stay_readable(tmp_path: Path) -> None:
    crash_after(tmp_path, "add(store, 1)\nadd(store, 2)\n")
    (tmp_path / JOURNAL_FILE).write_bytes(b"".join(journal_lines(tmp_path))[:-10])
    crash_after(tmp_path, "add(store, 3)\n")  # opens (repairing the tail) and appends, no close
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        assert people(store) == ["Person 1", "Person 3"]


def test_corruption_before_good_records_refuses_to_guess(tmp_path: Path) -> None:
    crash_after(tmp_path, "for n in range(1, 4):\n    add(store, n)\n")
    lines = journal_lines(tmp_path)
    lines[1] = lines[1].replace(b"Person 2", b"Person X")
    (tmp_path / JOURNAL_FILE).write_bytes(b"".join(lines))
    with pytest.raises(StoreError, match="corrupt at line 2") as err:
        EmbeddedStore(tmp_path, TEST_DIMS)
    assert str(tmp_path) in str(err.value)
    with open(tmp_path / LOCK_FILE, "a+b") as lock:  # the failed open released the folder
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)


def test_compaction_writes_a_snapshot_and_reopening_keeps_everything(tmp_path: Path) -> None:
    with EmbeddedStore(tmp_path, TEST_DIMS, compact_every=5) as store:
        for n in range(1, 13):
            add(store, n)
        (visit,) = [r for r in store.get_all(SCOPE) if r.source == "Person 1"]
        store.write(GraphWrite("retire", SCOPE, T0 + timedelta(hours=1), invalidations=[Invalidation(visit.id, T0)]))
        assert (tmp_path / SNAPSHOT_FILE).exists() and len(journal_lines(tmp_path)) < 5
        before = ([e.to_dict() for e in store.entities(SCOPE)], store.get_all(SCOPE, include_invalidated=True))
    assert journal_lines(tmp_path) == []  # close compacts
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        assert ([e.to_dict() for e in store.entities(SCOPE)], store.get_all(SCOPE, include_invalidated=True)) == before
        assert len(store.get_all(SCOPE)) == 11


def test_a_crash_between_snapshot_and_journal_truncation_applies_nothing_twice(tmp_path: Path) -> None:
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        add(store, 1)  # the hub exists in the snapshot; the journal below only touches it
    crash_after(tmp_path, "add(store, 2)\nadd(store, 3)\n")
    stale_journal = (tmp_path / JOURNAL_FILE).read_bytes()
    EmbeddedStore(tmp_path, TEST_DIMS).close()  # the snapshot now holds everything, journal emptied
    (tmp_path / JOURNAL_FILE).write_bytes(stale_journal)  # as if the truncation never happened
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        assert store.entities(SCOPE)[0].mentions == 3
        assert people(store) == ["Person 1", "Person 2", "Person 3"]
        add(store, 4)
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        assert store.entities(SCOPE)[0].mentions == 4


def test_snapshot_and_journal_are_plain_json(tmp_path: Path) -> None:
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        add(store, 1)
        line = journal_lines(tmp_path)[0]
        record = json.loads(line.split(b" ", 1)[1])
        assert record["seq"] == 1 and record["ops"][0][0] == "entity"
    snapshot = json.loads((tmp_path / SNAPSHOT_FILE).read_text())
    assert snapshot["relations"][0]["created_at"] == "2024-01-01T09:31:15.123456Z"


def test_a_second_open_from_another_process_is_refused(tmp_path: Path) -> None:
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        add(store, 1)
        code = CHILD_PRELUDE + textwrap.dedent(
            f"""
            from graphmem.errors import StoreError
            try:
                EmbeddedStore({str(tmp_path)!r}, {TEST_DIMS})
            except StoreError as exc:
                print("refused:", exc)
            """
        )
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert "refused:" in done.stdout and "in use by another process" in done.stdout, done.stderr
        assert str(tmp_path) in done.stdout
        with pytest.raises(StoreError, match="in use"):  # a second open in this process too
            EmbeddedStore(tmp_path, TEST_DIMS)
        add(store, 2)  # the refused opens did not disturb the open store
    with EmbeddedStore(tmp_path, TEST_DIMS) as again:  # reopening after close works
        assert people(again) == ["Person 1", "Person 2"]


def test_a_closed_store_refuses_calls_and_closing_twice_is_fine(tmp_path: Path) -> None:
    store = EmbeddedStore(tmp_path, TEST_DIMS)
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.entities(SCOPE)


def test_an_invalid_write_changes_nothing(tmp_path: Path) -> None:
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        add(store, 1)
        good = EntityWrite("p2", "Person 2", "person 2", "person", vec(2), is_new=True)
        dangling = RelationWrite("p2", "KNOWS", "nobody", T0)
        with pytest.raises(InvalidInputError, match="nobody"):
            store.write(GraphWrite("bad", SCOPE, T0, [good], [dangling]))
        with pytest.raises(InvalidInputError, match="dimensions"):
            store.write(GraphWrite("bad", SCOPE, T0, [EntityWrite("p3", "P", "p", "x", [1.0], True)]))
        assert people(store) == ["Person 1"] and len(journal_lines(tmp_path)) == 1


def test_opening_with_other_embedding_dims_is_a_config_error(tmp_path: Path) -> None:
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        add(store, 1)
    with pytest.raises(ConfigError, match=f"{TEST_DIMS}-dimensional"):
        EmbeddedStore(tmp_path, TEST_DIMS * 2)


def test_an_unusable_folder_is_a_store_error_naming_it(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match=str(blocker)):
        EmbeddedStore(blocker / "graph", TEST_DIMS)


def test_concurrent_threads_lose_no_write(tmp_path: Path) -> None:
    with EmbeddedStore(tmp_path, TEST_DIMS, compact_every=50) as store:
        add(store, 0)
        hub = EntityWrite("hub", "Hub", "hub", "place", vec(0), is_new=False)

        def worker(k: int) -> None:
            for i in range(25):
                person = EntityWrite(f"t{k}-{i}", f"T {k} {i}", canonical_name(f"T {k} {i}"), "person", vec(k), True)
                rel = RelationWrite(person.id, "VISITED", "hub", T0)
                store.write(GraphWrite(f"t{k}-{i}", SCOPE, T0, [hub, person], [rel]))

        threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert store.entities(SCOPE)[0].mentions == 1 + 8 * 25
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        assert store.entities(SCOPE)[0].mentions == 1 + 8 * 25
        assert len(store.get_all(SCOPE)) == 1 + 8 * 25


def test_delete_all_and_reset_are_durable(tmp_path: Path) -> None:
    other = Scope.of(user_id="bob")
    crash_after(tmp_path, "add(store, 1)\nadd(store, 2)\nstore.delete_all(SCOPE)\nadd(store, 3)\n")
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        assert people(store) == ["Person 3"] and store.entities(SCOPE)[0].mentions == 1
        store.write(GraphWrite("b", other, T0, [EntityWrite("b", "Bob", "bob", "person", vec(5), True)]))
        store.reset()
        assert store.entities(SCOPE) == [] and store.entities(other) == []
    crash_after(tmp_path, "assert store.entities(SCOPE) == []\nadd(store, 4)\n")
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        assert people(store) == ["Person 4"]


MEMORIES_BODY = """
from graphmem.types import MemoryWrite
add(store, 1)
def remember(n, *memories):
    store.write(GraphWrite(f"m-{n}", SCOPE, T0 + timedelta(hours=n), memories=list(memories)))
meta = {"city": "東京", "nested": {"a": [1, 2.5, None, "🎉"]}, "flag": True}
remember(1, MemoryWrite("ADD", "m1", "Visits the hub", vec(1), meta, "user", ["hub", "p1", "nobody"]),
         MemoryWrite("ADD", "m2", "Likes tea", vec(2), None, "assistant"))
remember(2, MemoryWrite("UPDATE", "m1", "Visits the hub daily", vec(3), None, None, ["p1"]),
         MemoryWrite("DELETE", "m2"),
         MemoryWrite("ADD", "m3", "Temporary", vec(4)))
assert store.delete_memory("m3")
"""


def memory_state(store: EmbeddedStore) -> list[dict]:
    return [m.to_dict() for m in store.list_memories(SCOPE, include_deleted=True)]


def test_memories_survive_a_crash_and_compaction(tmp_path: Path) -> None:
    crash_after(tmp_path, MEMORIES_BODY)
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        state = memory_state(store)
        assert [(m["id"], m["memory"]) for m in state] == [("m1", "Visits the hub daily"), ("m2", "Likes tea")]
        first, second = store.get_memory("m1"), store.get_memory("m2")
        assert first is not None and second is not None and store.get_memory("m3") is None
        assert first.metadata == {"city": "東京", "nested": {"a": [1, 2.5, None, "🎉"]}, "flag": True}
        assert first.created_at == T0 + timedelta(hours=1) and first.updated_at == T0 + timedelta(hours=2)
        assert second.deleted_at == T0 + timedelta(hours=2) and second.role == "assistant"
        assert [[m.id for m in hits] for hits in store.similar_memories(SCOPE, [vec(3)], top_k=5)] == [["m1"]]
    assert journal_lines(tmp_path) == [] and (tmp_path / SNAPSHOT_FILE).exists()  # close compacted
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:  # from the snapshot alone
        assert memory_state(store) == state
        assert store.similar_memories(SCOPE, [vec(3)], top_k=1)[0][0].score == pytest.approx(1.0)
        store.delete_all(SCOPE)
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        assert memory_state(store) == [] and store.get_memory("m1") is None


def test_an_invalid_memory_write_changes_nothing(tmp_path: Path) -> None:
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        add(store, 1)
        good = MemoryWrite("ADD", "ok", "fine", vec(1))
        for bad, match in [
            (MemoryWrite("ADD", "m", "x", vec(1), {"when": object()}), "metadata"),
            (MemoryWrite("ADD", "m", "x", [1.0]), "dimensions"),
            (MemoryWrite("ADD", "m", "x", None), "embedding"),
            (MemoryWrite("MERGE", "m", "x", vec(1)), "event"),
        ]:
            with pytest.raises(InvalidInputError, match=match):
                store.write(GraphWrite("bad", SCOPE, T0, memories=[good, bad]))
        assert store.list_memories(SCOPE, include_deleted=True) == [] and len(journal_lines(tmp_path)) == 1


def test_opening_memories_with_other_embedding_dims_is_a_config_error(tmp_path: Path) -> None:
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        store.write(GraphWrite("m", SCOPE, T0, memories=[MemoryWrite("ADD", "m", "only a memory", vec(1))]))
    with pytest.raises(ConfigError, match=f"{TEST_DIMS}-dimensional"):
        EmbeddedStore(tmp_path, TEST_DIMS * 2)


def test_the_folder_can_move(tmp_path: Path) -> None:
    with EmbeddedStore(tmp_path / "a", TEST_DIMS) as store:
        add(store, 1)
    shutil.move(tmp_path / "a", tmp_path / "b")
    with EmbeddedStore(tmp_path / "b", TEST_DIMS) as store:
        assert people(store) == ["Person 1"]


def _as_format_1(value):
    """A format-2 file's JSON with every packed vector written as a JSON list, as format 1 did."""
    from graphmem.stores.embedded.journal import VECTOR, as_vector

    if isinstance(value, dict):
        if set(value) == {VECTOR}:
            return as_vector(value).tolist()
        return {k: _as_format_1(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_format_1(v) for v in value]
    return value


def test_files_of_format_1_with_vectors_as_json_lists_still_load(tmp_path: Path) -> None:
    import zlib

    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        add(store, 1)
    crash_after(tmp_path, "add(store, 2)")  # person 2 only in the journal
    snapshot = _as_format_1(json.loads((tmp_path / SNAPSHOT_FILE).read_text()))
    assert snapshot["entities"][0]["embedding"] == vec(0) and snapshot["version"] == 2
    (tmp_path / SNAPSHOT_FILE).write_text(json.dumps({**snapshot, "version": 1}))
    old_lines = []
    for line in journal_lines(tmp_path):
        body = json.dumps(_as_format_1(json.loads(line.split(b" ", 1)[1]))).encode()
        assert b'"f8"' not in body and b"[0.0, " in body
        old_lines.append(b"%08x %s\n" % (zlib.crc32(body), body))
    (tmp_path / JOURNAL_FILE).write_bytes(b"".join(old_lines))
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        assert people(store) == ["Person 1", "Person 2"]
        found = store.match_entities(SCOPE, [EntityCandidate("someone", vec(2))], 0.99)
        assert found[0] is not None and found[0].name == "Person 2" and found[0].score == pytest.approx(1.0)
        add(store, 3)  # written in format 2 beside the format-1 records
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        assert people(store) == ["Person 1", "Person 2", "Person 3"]
    assert json.loads((tmp_path / SNAPSHOT_FILE).read_text())["version"] == 2


def test_vectors_are_packed_and_read_back_exactly(tmp_path: Path) -> None:
    v = [((i * 7919) % 1000) / 997.0 - 0.5 for i in range(TEST_DIMS)]
    memory = MemoryWrite("ADD", "m1", "a fact", v, {}, "user")
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        store.write(GraphWrite("add-1", SCOPE, T0, memories=[memory]))
        live = store._graph.memories.rows["m1"]["embedding"].copy()
        assert b'"f8":' in journal_lines(tmp_path)[0] and b"[0." not in journal_lines(tmp_path)[0]
    with EmbeddedStore(tmp_path, TEST_DIMS) as store:
        assert store._graph.memories.rows["m1"]["embedding"].tolist() == live.tolist()  # bit for bit
