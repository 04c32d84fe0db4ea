"""Python's cyclic garbage collector, run less often while actors run.

CPython collects its youngest generation after every 700 container objects allocated and not
freed. A tick of a Warzone match allocates tens of thousands (facts, percepts, plans, the
planner's copies), nearly all freed by reference counting within the tick; yet the collector
ran about 13 times a tick at 48v48 in one process, and each pass also walks the young objects
still alive then (a tick's big lists and dicts of facts), about a millisecond each. Measured
(CPU time in the collector over a 60-tick match, one process): 7% of the CPU at 12v12, 17% at
48v48, a share that grows with the battle. With the youngest generation collected every
50,000 objects instead, the collector took 1% at 48v48.

Only the moment changes: what is garbage is collected all the same, a little later (a run
keeps at most that many more objects alive between passes, a few MB). Nothing a run sends
depends on when the collector runs.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

YOUNG_THRESHOLD = 50_000
"""Container objects allocated (net) between two collections of the youngest generation
while actors run (CPython's default: 700)."""


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Raise the youngest generation's threshold to :data:`YOUNG_THRESHOLD` (never lower it)
    for the block; the thresholds the process had are restored after it."""
    before = gc.get_threshold()
    gc.set_threshold(max(before[0], YOUNG_THRESHOLD), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


class _Holds:
    """The holders of :func:`hold_fewer_collections` in this process, and the thresholds the
    process had before the first of them."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.count = 0
        self.saved: tuple[int, int, int] = gc.get_threshold()


_HOLDS = _Holds()


def hold_fewer_collections() -> Callable[[], None]:
    """Raise the youngest generation's threshold as :func:`fewer_collections` does, until the
    returned function is called (calling it again does nothing).

    For what outlives one block: an environment holds it from ``reset()`` to ``close()``. The
    holders are counted, so that environments opened and closed in any order leave the
    process's thresholds as they were before the first one (a nested ``with`` of
    :func:`fewer_collections` could not: each would restore what it found)."""
    with _HOLDS.lock:
        if _HOLDS.count == 0:
            _HOLDS.saved = before = gc.get_threshold()
            gc.set_threshold(max(before[0], YOUNG_THRESHOLD), *before[1:])
        _HOLDS.count += 1
    released = False

    def release() -> None:
        nonlocal released
        with _HOLDS.lock:
            if released:
                return
            released = True
            _HOLDS.count -= 1
            if _HOLDS.count == 0:
                gc.set_threshold(*_HOLDS.saved)

    return release
