"""Plans made off the user's path: statements keep their plan until the data has grown, and the next
plans are made in the background before any add or search uses them.

Neo4j plans a statement again on its first use after the statistics it was planned on moved by more
than its divergence threshold (0.75, decaying with the plan's age, at least 10 s after the plan was
made). On a young database, whose statistics swing with every add (empty indexes have a default
selectivity of 0.1; 10 nodes become 40), that lands on the user's adds and searches: measured on the
2-core machine, a first search after a dozen adds took 13 s (two statements planned again, 4 and 8.6
s) and single adds 6-9 s, every plan warmed at set-up (debug.log: "Discarded stale query ...
IndexSelectivity ... changed from 0.0 to 1.0"). So:

- every packed statement is sent with ``CYPHER replan=skip``: a plan in the server's cache is used
  even when its statistics are stale (the server still plans a statement it has no plan for);
- its text ends with a comment naming the plan generation, which follows the size of the database
  (a generation per 4x nodes above FLOOR, about Neo4j's own threshold): the server keys its plan
  cache on the text, so a new generation is a new set of plans, made with the statistics of then;
- after writes (at most every CHECK_EVERY seconds) one background thread reads the node count (one
  statement, the counts store); when the generation moved, it plans the add and search statements
  of the new one (the plan warming's jobs, warm.py) and only then do adds and searches switch to it.

So plans track the data at most 4x behind, as Neo4j's would, and re-planning costs a background
thread instead of a user's request.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable

log = logging.getLogger(__name__)

#: what makes the server use a cached plan whatever its statistics say now
SKIP = "CYPHER replan=skip\n"
#: a database of fewer nodes is one generation: plans made on it are fast on it whatever they are
FLOOR = 1000
#: nodes grow this many times from one generation to the next (Neo4j's divergence threshold 0.75)
GROWTH = 4
#: seconds between two node counts after writes (one cheap statement on a background thread)
CHECK_EVERY = 30.0


def generation_of(nodes: int, floor: int = FLOOR) -> int:
    """0 below ``floor`` nodes, then one more per GROWTH times as many."""
    if nodes < floor:
        return 0
    return 1 + int(math.log(nodes / floor, GROWTH) + 1e-9)


def tagged(text: str, generation: int) -> str:
    """The text the server is sent: plans kept (``replan=skip``) and keyed to ``generation``."""
    return f"{SKIP}{text}\n// plan generation {generation}"


class PlanGenerations:
    """The generation adds and searches use, moved forward in the background (module docstring).

    ``count_nodes`` reads the database's node count; ``replan(generation)`` plans the statements of
    that generation (returns False when it could not: the switch waits for the next check)."""

    def __init__(self, count_nodes: Callable[[], int], replan: Callable[[int], bool], floor: int = FLOOR,
                 check_every: float = CHECK_EVERY) -> None:
        self.count_nodes = count_nodes
        self.replan = replan
        self.floor = floor
        self.check_every = check_every
        self.current = 0
        self._last_check = time.monotonic()
        self._lock = threading.Lock()
        self._running: threading.Thread | None = None
        self.stopping = threading.Event()  # the store is closing: no new check, a replan stops between jobs

    def start(self, nodes: int) -> None:
        """The generation of a database of ``nodes`` (set-up, before its statements are warmed)."""
        self.current = generation_of(nodes, self.floor)

    def after_write(self) -> None:
        """Called after each commit: a background check when the last one is old enough."""
        with self._lock:
            if self.stopping.is_set() or (self._running is not None and self._running.is_alive()):
                return
            if time.monotonic() - self._last_check < self.check_every:
                return
            self._last_check = time.monotonic()
            self._running = threading.Thread(target=self._check_logged, name="graphmem-plans", daemon=True)
            self._running.start()

    def refresh(self) -> int:
        """Count the nodes now; plan a new generation before switching to it. Returns the current one."""
        wanted = generation_of(self.count_nodes(), self.floor)
        if wanted != self.current and self.replan(wanted):
            log.info("the database grew: statements now use the plans of generation %d (were %d)", wanted, self.current)
            self.current = wanted
        return self.current

    def wait(self, timeout: float | None = None) -> None:
        """Wait for a background check in flight (tests)."""
        running = self._running
        if running is not None:
            running.join(timeout)

    def stop(self, timeout: float | None = None) -> None:
        """No more checks; the one in flight ends after its statement (the store is closing)."""
        self.stopping.set()
        self.wait(timeout)

    def _check_logged(self) -> None:
        try:
            self.refresh()
        except Exception as exc:  # noqa: BLE001 - the plans in use stay valid; the next check tries again
            log.info("could not check the database's size for its plans: %s", exc)


__all__ = ["FLOOR", "GROWTH", "SKIP", "PlanGenerations", "generation_of", "tagged"]
