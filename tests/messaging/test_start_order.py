"""Start order (issue 12, test 6): the broker, the clock (``world``), a commander and its bots,
each its own OS process, started in 6 random orders: every first order is answered
(``warband bench chaos --only start-order`` runs the issue's 20 with 24 bots).

The harness is chaoslib/faults.py's: the processes fork from a forkserver that has warband
imported already, and every process is killed and reaped.
"""

from __future__ import annotations

from pathlib import Path

from tests.chaoslib.faults import start_order

ORDERS = 6
BOTS = 3


def test_every_first_order_is_answered_whatever_order_the_processes_start_in(
    tmp_path: Path,
) -> None:
    figures = start_order(tmp_path, orders=ORDERS, bots=BOTS)

    bots = [f"bot-{n}" for n in range(1, BOTS + 1)]
    assert ORDERS == len(figures["runs"])
    for run in figures["runs"]:
        assert 0 == run["clock_exit"], f"the clock failed, start order {run['order']}"
        assert (bots, {}) == (run["answered"], run["failed"]), f"start order {run['order']}"
        assert (True, {}) == (run["completed"], run["departed"]), f"start order {run['order']}"
