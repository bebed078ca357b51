"""Plan the add and search statements when a store is set up, so the first add and search after a
server start do not pay their query planning (measured in docs/add-modes.md: 14-21 s for a first
staged add on the loaded 2-core machine, against 0.3-0.7 s warm).

Every statement is sent with one map parameter (values.Statement.run_args), so Neo4j keeps one plan
per statement text whatever the values: running a statement once with any values serves every later
call. Neo4j's plan cache key also holds whether the transaction has written yet: an add runs its
reads and its write after scope_lock.cypher has written in the same transaction, so a statement
planned in a fresh transaction is planned again there (measured: conversation 3.6 s planned fresh,
then 0.8 s more after a scope lock; docs/add-modes.md). So each statement is warmed in the
transaction shape it runs in: the locked add's statements together in one transaction opened by
the scope lock, reads on their own, the unlocked write with its attributes. Reads run on a scope
that holds nothing; writes run in a transaction that is rolled back (EXPLAIN plans a statement but
does not leave its plan for the real one). One background thread plans them in the order an add,
then a search, needs them, so set-up does not wait; a plan cache is the server's, so one process
warms one server once (``WARMED``).

Planned is not yet fast: after a server start, the first add and search over real rows still paid
30-60 ms of first executions on the server (index updates and their first reads, code paths that
empty scopes never reach). So the warming ends with a rehearsal (``rehearsal``; the store's
``_rehearse``): one locked write committed in a scope of its own with a fresh random id, a memory
and a graph search there, and the scope deleted. Nobody else can name that scope, and nothing is
left behind. A read-only store skips it.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import socket
import threading
import time
from collections.abc import Callable
from datetime import datetime, timezone

from graphmem.stores.base import AddContextQuery, EntityCandidate, GraphQuery, MemoryQuery
from graphmem.stores.memory_context import ContextQuery
from graphmem.stores.neo4j import cached_search, lifecycle, queries, single_pass
from graphmem.stores.neo4j import conversation as log_queries
from graphmem.stores.neo4j import memories as memory_queries
from graphmem.stores.neo4j.values import Statement, VectorPlan
from graphmem.types import (
    EntityWrite,
    GraphWrite,
    Invalidation,
    LoggedMessage,
    MemoryWrite,
    RelationWrite,
    Scope,
    new_id,
)

log = logging.getLogger(__name__)

#: (url, database) of the servers this process has warmed (benchmarks that restart one clear it)
WARMED: set[tuple[str, str | None]] = set()

#: the scope the statements are planned on: only read, its writes rolled back, so even a user who
#: picked this id loses or gains nothing
WARM_SCOPE = Scope.of(user_id="graphmem-plan-warming")
_AT = datetime(2000, 1, 1, tzinfo=timezone.utc)


#: seconds a process's exit waits for the statement the warmer is running (as Neo4jStore.close does)
EXIT_WAIT = 30.0

#: statements run together in one transaction, and whether they only read
Job = tuple[tuple[Statement, ...], bool]


def statements(dims: int, plan: VectorPlan, relation_limit: int) -> list[Job]:
    """The jobs in the order an add, then a search, then the rest need them."""
    v = _unit(dims)
    s, write = WARM_SCOPE, _sample_write()
    locked: list[Statement | None] = [  # an add's transaction: the lock's write first, as in Neo4jStore._held
        queries.scope_lock(s),
        log_queries.conversation(s, 10),
        queries.resolve(s, [EntityCandidate("warm", v, True)], 0.7, [v], 5, [], 20, plan),
        single_pass.context_statement(s, AddContextQuery("warm", v, "warm up"), plan),
        queries.write_graph(write, unlock=True),
        queries.set_entity_attributes(write),
    ]
    found: list[tuple[list[Statement | None], bool]] = [
        (locked, False),
        ([queries.search_graph(s, GraphQuery(v, "warm up", ["warm"]), plan, relation_limit)], True),
        ([cached_search.seeds_statement(s, GraphQuery(v, "warm up", ["warm"]), plan, None, "v"), cached_search.rows_statement(s, [])], True),
        ([memory_queries.search_memories(s, MemoryQuery(v, "warm up"), plan)], True),
        ([memory_queries.memory_context(s, ContextQuery(v, ["none"]))], True),
        ([log_queries.conversation(s, 10)], True),  # the summary's and get_summary's reads, outside a lock
        ([single_pass.context_statement(s, AddContextQuery("warm", v, "warm up"), plan)], True),
        ([log_queries.set_summary(s, "warm", 1, _AT)], False),
        ([lifecycle.purge_expired(_AT, 1)], False),  # retention's purge runs on an add's path once a minute
        ([queries.write_graph(write), queries.set_entity_attributes(write)], False),  # add_many: no lock
    ]
    jobs = [(tuple(stmt for stmt in group if stmt is not None), read) for group, read in found]
    return [job for job in jobs if job[0]]


class Warmer:
    """Runs ``plan_one`` over the statements on a daemon thread; ``done`` is set when it has."""

    def __init__(self, jobs: list[Job], plan_one: Callable[[tuple[Statement, ...], bool], None],
                 then: Callable[[], None] | None = None, interrupt: Callable[[], None] | None = None) -> None:
        self.jobs = jobs
        self.plan_one = plan_one
        self.then = then  # run once the statements are planned (the store's rehearsal)
        self.interrupt = interrupt  # ends the statement in flight now (the store: its connections' sockets shut)
        self.done = threading.Event()
        self.stopping = threading.Event()
        self.seconds: float | None = None
        self.failed: list[str] = []
        self.thread = threading.Thread(target=self._run, name="graphmem-warm", daemon=True)

    def start(self) -> Warmer:
        # a process that exits without close() must not finalise the interpreter under a daemon thread
        # that drives the Neo4j driver (it crashed: segmentation fault or abort at exit, 6 runs of 15)
        atexit.register(self.stop_at_exit)
        self.thread.start()
        return self

    def stop_at_exit(self, wait: float = EXIT_WAIT) -> None:
        """Plan nothing more and end the statement in flight (atexit; close() does the same). A
        statement being planned on a cold server takes up to tens of seconds, and the exit used to
        wait for it (a short-lived process exited 21 s after its work); ``interrupt`` shuts its
        connection so the driver fails it at once, and the thread, seeing ``stopping``, ends."""
        self.stopping.set()
        if self.thread.is_alive() and self.interrupt is not None:
            try:
                self.interrupt()
            except Exception as exc:  # noqa: BLE001 - then the statement in flight is waited for, as before
                log.debug("could not interrupt the warming's statement: %s", exc)
        if self.thread.is_alive():
            self.thread.join(timeout=wait)

    def _run(self) -> None:
        started = time.perf_counter()
        try:
            for group, read in self.jobs:
                if self.stopping.is_set():
                    return
                try:
                    self.plan_one(group, read)
                except Exception as exc:  # noqa: BLE001 - warming never fails anything: it plans on first use
                    if not self.stopping.is_set():
                        names = "+".join(stmt.name for stmt in group)
                        self.failed.append(names)
                        log.warning("could not plan %s ahead (it plans on first use): %s", names, exc)
            if self.then is not None and not self.stopping.is_set():
                try:
                    self.then()
                except Exception as exc:  # noqa: BLE001 - as above: the first add and search pay it
                    if not self.stopping.is_set():
                        self.failed.append("rehearsal")
                        log.info("the warming's rehearsal failed (the first add and search run it): %s", exc)
        finally:
            self.seconds = time.perf_counter() - started
            self.done.set()
            atexit.unregister(self.stop_at_exit)


def shut_connections_in_use(driver: object) -> int:
    """Shut the sockets of the driver's connections in use (the warmer's, at exit or close: nobody
    else's statement runs then), so a statement waiting on the server fails now; returns how many.
    The pool is the driver's private part: anything unexpected leaves it alone."""
    pool = getattr(driver, "_pool", None)
    shut = 0
    for connections in list(getattr(pool, "connections", {}).values()):
        for connection in list(connections):
            if not getattr(connection, "in_use", False):
                continue
            sock = getattr(connection, "socket", None)
            raw = getattr(sock, "_socket", sock)
            if isinstance(raw, socket.socket):
                with contextlib.suppress(OSError):
                    raw.shutdown(socket.SHUT_RDWR)
                    shut += 1
    return shut


def rehearsal(dims: int) -> tuple[GraphWrite, list[float]]:
    """An add's write for a scope of its own (a fresh random id, deleted after the rehearsal), and a
    query vector close to what it holds: real vectors, so the write passes the store's checks."""
    scope = Scope.of(user_id=f"graphmem-warming-{new_id()}")
    v = _unit(dims)
    write = _sample_write()
    write.scope, write.invalidations = scope, []
    write.memories = [m for m in write.memories if m.event == "ADD"]
    for entity in write.entities:
        entity.embedding = v
    for memory in write.memories:
        memory.embedding = v
    return write, v


def _unit(dims: int) -> list[float]:
    """A unit vector of ``dims`` dimensions (every component equal)."""
    return [1.0 / dims**0.5] * dims


def _sample_write() -> GraphWrite:
    """A write holding one of everything, so every part of write_graph is planned with list values."""
    a, b = new_id(), new_id()
    write = GraphWrite(add_id=new_id(), scope=WARM_SCOPE, at=_AT)
    write.entities = [EntityWrite(a, "warm", "warm", "thing", [0.0], True, {"colour": "red"}),
                      EntityWrite(b, "up", "up", "thing", [0.0], False)]
    write.relations = [RelationWrite(a, "WARMS", b, valid_at=_AT)]
    write.invalidations = [Invalidation(new_id(), _AT)]
    write.memories = [MemoryWrite("ADD", new_id(), "warm", [0.0], {}, "user", [a]), MemoryWrite("DELETE", new_id())]
    write.messages = [LoggedMessage("user", "warm", _AT)]
    return write


__all__ = ["WARM_SCOPE", "WARMED", "Job", "Warmer", "rehearsal", "statements"]
