"""Issue 12, test 14: the same seed in one process and across two hosts (network namespaces
joined by a veth pair) sends the same agent messages when nothing fails.

Host A runs the broker and the clock (or the world); host B runs every agent, each a
``warband agent`` process started with ``ip netns exec``, connected to the broker over the
link's link-local address: the README's "run across machines", on one machine.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.chaoslib.netns import Hosts, hosts_of_this_process, netns_available, two_hosts
from tests.conftest import REPO, CommandResult
from tests.test_cli import _agent_sends
from warband.scenario import load_scenario

pytestmark = pytest.mark.processes

PORT = 5555
"""The broker's port on host A: the namespace is the test's own, so nothing else holds it."""
RUN_TIMEOUT_S = 60.0


@pytest.fixture(scope="module")
def hosts_allowed() -> None:
    reason = netns_available()
    if reason is not None:
        pytest.skip(f"network namespaces are not available here: {reason}")


class HostProcesses:
    """``warband`` processes started inside namespaces; all killed and reaped by :meth:`close`."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.processes: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, argv: list[str], name: str, *args: str) -> None:
        """Run ``warband ARGS`` under ``argv`` (an ``ip netns exec HOST`` prefix)."""
        with (
            (self.folder / f"{name}.out").open("wb") as out,
            (self.folder / f"{name}.err").open("wb") as err,
        ):
            self.processes[name] = subprocess.Popen(
                [*argv, sys.executable, "-m", "warband", *args],
                cwd=REPO,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,  # so close() can kill whatever it started, too
            )

    def stderr(self, name: str) -> str:
        return (self.folder / f"{name}.err").read_text(errors="replace")

    def wait(self, name: str, deadline: float) -> int:
        try:
            return self.processes[name].wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pytest.fail(f"{name} did not end in time; its stderr:\n{self.stderr(name)[-2000:]}")

    def close(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


@contextlib.contextmanager
def _hosts(folder: Path) -> Iterator[tuple[Hosts, HostProcesses]]:
    """Two namespaces and the processes run in them: processes reaped before the namespaces go."""
    with two_hosts() as hosts:
        processes = HostProcesses(folder)
        try:
            yield hosts, processes
        finally:
            processes.close()


def _link_bytes_sent(host: str, dev: str) -> int:
    """Bytes ``dev`` in namespace ``host`` has sent: what crossed the link from that side."""
    shown = subprocess.run(
        ["ip", "-n", host, "-j", "-s", "link", "show", "dev", dev],
        capture_output=True,
        text=True,
        check=True,
    )
    sent: int = json.loads(shown.stdout)[0]["stats64"]["tx"]["bytes"]
    return sent


def _run_across_hosts(
    folder: Path, scenario_file: str, seed: int, log_dir: Path
) -> tuple[dict[str, Any], int]:
    """Broker and clock on host A, each agent on host B: the clock's result, and the bytes
    host B sent over the link."""
    scenario = load_scenario(REPO / scenario_file)
    params = scenario.resolve_params({})
    agents = [actor.id for actor in scenario.build(params, seed)]
    result_file = folder / "result.json"
    with _hosts(folder) as (hosts, processes):
        on_a, on_b = hosts.run(hosts.a), hosts.run(hosts.b)
        endpoint = f"tcp://{hosts.addr_a}:{PORT}"
        common = [
            "--connect",
            endpoint,
            "--scenario",
            scenario_file,
            "--seed",
            str(seed),
            "--log",
            str(log_dir),
        ]
        processes.start(on_a, "broker", "broker", "--bind", f"tcp://0.0.0.0:{PORT}")
        processes.start(
            on_a, scenario.clock_id, "agent", *common, "--id", scenario.clock_id,
            "--result", str(result_file),
        )  # fmt: skip
        for agent in agents:
            processes.start(on_b, agent, "agent", *common, "--id", agent)
        deadline = time.monotonic() + RUN_TIMEOUT_S
        for name in [scenario.clock_id, *agents]:
            code = processes.wait(name, deadline)
            assert 0 == code, f"{name} exited {code}:\n{processes.stderr(name)[-2000:]}"
        sent_by_b = _link_bytes_sent(hosts.b, hosts.dev_b)
    result: dict[str, Any] = json.loads(result_file.read_text())
    return result, sent_by_b


@pytest.mark.usefixtures("hosts_allowed")
@pytest.mark.parametrize("scenario_file", ["scenarios/ping_pong.py", "scenarios/skirmish.py"])
def test_same_seed_sends_the_same_messages_in_one_process_and_across_two_hosts(
    warband_cli: Callable[..., CommandResult], tmp_path: Path, scenario_file: str
) -> None:
    one, hosts_log = tmp_path / "one", tmp_path / "hosts"
    in_one_process = warband_cli(
        "run", scenario_file, "--seed", "11", "--log", str(one), "-q", timeout=RUN_TIMEOUT_S
    )
    assert 0 == in_one_process.returncode, in_one_process.stderr

    result, sent_by_b = _run_across_hosts(tmp_path, scenario_file, 11, hosts_log)

    assert result["completed"] is True, result
    expected = _agent_sends(one)
    assert len(expected) > 20
    assert expected == _agent_sends(hosts_log)
    # The agents' messages went over the veth pair, not a loopback: at least a byte each.
    clock_id = load_scenario(REPO / scenario_file).clock_id
    from_b = [row for row in expected if row[1] != clock_id]
    assert sent_by_b >= len(from_b) > 0


@pytest.mark.usefixtures("hosts_allowed")
def test_the_hosts_are_gone_after_a_run_across_them() -> None:
    assert [] == hosts_of_this_process()
