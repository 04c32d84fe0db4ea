"""Start order (issue 12, test 6): the broker, the clock (``world``), a commander and its bots,
each its own OS process, started in 6 random orders: every first order is answered
(``warband bench chaos --only start-order`` runs the issue's 20 with 24 bots).

The processes fork from a server that has warband imported already (multiprocessing's
forkserver), so a start costs milliseconds instead of an interpreter's start-up, and each one
runs what ``warband broker`` / ``warband agent`` run. Every process is killed and reaped.
"""

from __future__ import annotations

import multiprocessing
import random
import time
from collections.abc import Iterator
from multiprocessing.context import ForkServerContext
from multiprocessing.process import BaseProcess
from pathlib import Path

import msgspec
import pytest

from warband.messaging.clock import RunResult

SCENARIO = Path(__file__).resolve().parents[1] / "scenarios" / "start_order.py"
ORDERS = 6
BOTS = 3


def _broker(endpoint: str) -> None:
    from warband.messaging.broker import Broker

    Broker(endpoint).serve()  # until the test kills it


def _agent(agent_id: str, endpoint: str, result: str) -> None:
    from warband.launcher import RunOptions, run_agent
    from warband.scenario import load_scenario

    options = RunOptions(params={"bots": str(BOTS)}, start_timeout=30, tick_timeout=10)
    scenario = load_scenario(SCENARIO)
    raise SystemExit(run_agent(scenario, agent_id, endpoint, options, Path(result)))


@pytest.fixture(scope="module")
def forkserver() -> Iterator[ForkServerContext]:
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(
        ["warband.launcher", "warband.messaging.broker", "warband.scenario", "zmq"]
    )
    yield context


def _run_once(
    forkserver: ForkServerContext, order: list[str], workdir: Path, pace: random.Random
) -> RunResult:
    endpoint = f"ipc://{workdir / 'broker.sock'}"
    result = workdir / "result.json"
    processes: dict[str, BaseProcess] = {}
    try:
        for name in order:
            if name == "broker":
                target, args = _broker, (endpoint,)
            else:
                target, args = _agent, (name, endpoint, str(result))  # type: ignore[assignment]
            processes[name] = forkserver.Process(target=target, args=args, name=name)
            processes[name].start()
            time.sleep(pace.uniform(0, 0.05))
        processes["world"].join(60)
        assert 0 == processes["world"].exitcode, f"the clock ended with {processes['world']}"
    finally:
        for process in processes.values():
            if process.is_alive():
                process.kill()
            process.join(10)
    return msgspec.json.decode(result.read_bytes(), type=RunResult)


def test_every_first_order_is_answered_whatever_order_the_processes_start_in(
    forkserver: ForkServerContext, tmp_path: Path
) -> None:
    names = ["broker", "world", "commander", *(f"bot-{n}" for n in range(1, BOTS + 1))]
    shuffle = random.Random(12)
    started = time.monotonic()
    for run in range(ORDERS):
        order = shuffle.sample(names, len(names))
        workdir = tmp_path / f"run-{run}"
        workdir.mkdir()
        result = _run_once(forkserver, order, workdir, shuffle)
        commander = result.final_states["commander"]
        assert {"answered": [f"bot-{n}" for n in range(1, BOTS + 1)], "failed": {}} == commander, (
            f"start order {order}"
        )
        assert result.completed and {} == result.departed, f"start order {order}"
    print(f"{ORDERS} start orders of {len(names)} processes in {time.monotonic() - started:.1f} s")
