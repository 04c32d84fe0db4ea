"""Runs that end: participants that leave for good, brokers that die or restart, failures that
surface in the summary and in ``--json``. Real processes, real sockets; every process a test
starts is killed and reaped when the test ends, pass or fail."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO, CommandResult, last_json_line
from tests.proc import child_running, free_tcp_port, wait_until

LIVENESS = str(REPO / "tests" / "scenarios" / "liveness.py")

Cli = Callable[..., CommandResult]


def _report(result: CommandResult) -> dict[str, object]:
    return last_json_line(result.stdout)


# --- a participant gone for good -------------------------------------------------------------

# A tick timeout far above the test's own time-out: a clock that waited for the departed bot
# even once per tick would never finish within it.
PATIENT = ("--tick-timeout", "600", "--json", "--quiet")


@pytest.mark.parametrize("processes", [False, True], ids=["one-process", "processes"])
def test_a_bot_that_stops_for_good_is_not_waited_for_and_the_run_goes_on(
    warband_cli: Cli, processes: bool
) -> None:
    extra = ("--processes",) if processes else ()
    result = warband_cli(
        "run", LIVENESS, *extra, "--param", "leave=bot-1@3", "--ticks", "60", *PATIENT
    )
    assert 0 == result.returncode, result.stderr
    report = _report(result)
    assert 60 == report["ticks"]
    assert 0 == report["tick_timeouts"]
    assert {"bot-1": "left: leaving at tick 3 on purpose"} == report["departed"]
    assert report["completed"] is True
    assert "success" == report["outcome"]
    assert "left the run: bot-1" in result.stderr


@pytest.mark.processes
def test_an_agent_that_fails_in_on_start_every_time_is_given_up_on_quickly(
    warband_cli: Cli,
) -> None:
    result = warband_cli(
        "run",
        LIVENESS,
        "--processes",
        "--param",
        "fail_start=bot-2",
        "--start-timeout",
        "600",
        *PATIENT,
    )
    assert 0 == result.returncode, result.stderr
    report = _report(result)
    assert ["bot-2"] == list(report["departed"]), report["departed"]  # type: ignore[call-overload]
    # Its leave notice says why, unless the supervisor's give-up (its restarts used up) reaches
    # the broker first: both name the run's one failing agent, and either ends the wait.
    reason = str(report["departed"]["bot-2"])  # type: ignore[index]
    assert "on_start failed" in reason or reason.startswith("gave_up: exited with code 1"), reason
    assert 20 == report["ticks"]
    assert 0 == report["tick_timeouts"]


@pytest.mark.processes
def test_a_process_that_keeps_dying_is_given_up_on_after_its_restarts_and_a_short_grace(
    warband_cli: Cli,
) -> None:
    result = warband_cli(
        "run", LIVENESS, "--processes", "--param", "die_at=bot-1@3", "--ticks", "30", *PATIENT
    )
    assert 0 == result.returncode, result.stderr
    report = _report(result)
    # The supervisor gave up on it: the report says so, not merely that it disconnected.
    assert ["bot-1"] == list(report["departed"])  # type: ignore[call-overload]
    assert report["departed"]["bot-1"].startswith("gave_up: exited with code 3")  # type: ignore[index]
    assert 4 == len(report["pids"]["bot-1"])  # type: ignore[index]
    assert 30 == report["ticks"]
    assert 0 == report["tick_timeouts"]


@pytest.mark.processes
def test_a_frozen_agent_is_found_silent_and_the_run_goes_on_without_it(
    launched: Launched, tmp_path: Path
) -> None:
    # SIGSTOP keeps the connection open and sends nothing, as a host that vanished would.
    endpoint = f"tcp://127.0.0.1:{free_tcp_port()}"
    tick_file = tmp_path / "tick"
    launched.start("broker", "broker", "--bind", endpoint)
    names = _start_run_by_hand(launched, endpoint, tick_file, ticks=60, broker_timeout=60)
    wait_until(lambda: _tick_in(tick_file) >= 3, 60, "tick 3")
    launched.processes["bot-2"].send_signal(signal.SIGSTOP)
    for name in ("clock", "bot-1"):
        assert 0 == launched.wait(name, 120), launched.stderr(name)
    result = json.loads((tmp_path / "result.json").read_text())
    assert 60 == result["ticks"]
    assert 0 == result["tick_timeouts"]
    assert ["bot-2"] == list(result["departed"])
    assert result["departed"]["bot-2"].startswith("silent for")
    assert "bot-2" in names


def test_the_scenario_decides_the_run_cannot_go_on_without_an_essential_agent(
    warband_cli: Cli,
) -> None:
    result = warband_cli(
        "run",
        LIVENESS,
        "--param",
        "leave=bot-1@3",
        "--param",
        "essential=bot-1",
        "--ticks",
        "60",
        *PATIENT,
    )
    assert 1 == result.returncode
    report = _report(result)
    assert report["completed"] is False
    assert "failure" == report["outcome"]
    assert 3 == report["ticks"]
    assert "bot-1 left" in str(report["finish_reason"])
    assert "cannot go on without it" in str(report["finish_reason"])
    assert "the run did not complete" in result.stderr


# --- failures surface ---------------------------------------------------------------------


def test_handler_failures_reach_the_json_summary_and_the_run_is_not_clean(
    warband_cli: Cli,
) -> None:
    result = warband_cli("run", LIVENESS, "--param", "raise_at=bot-1@2", "--json", "-q")
    assert 0 == result.returncode, result.stderr
    report = _report(result)
    assert {"bot-1": 1} == report["handler_failures"]
    assert report["clean"] is False
    assert {} == report["undeliverable"]
    assert "SUCCESS, NOT CLEAN" in result.stderr
    assert "handler failures: bot-1 1" in result.stderr


def test_a_clean_run_says_so_and_keeps_every_earlier_json_key(warband_cli: Cli) -> None:
    result = warband_cli("run", LIVENESS, "--json", "-q")
    assert 0 == result.returncode, result.stderr
    report = _report(result)
    earlier = {
        "scenario",
        "seed",
        "ticks",
        "processes",
        "messages_sent",
        "messages_received",
        "outcome",
        "outcome_summary",
        "outcome_details",
        "completed",
        "finish_reason",
        "duration_s",
        "params",
        "pids",
        "restarts",
        "messages_rejected",
        "tick_timeouts",
        "missing",
        "log_dir",
    }
    assert earlier <= set(report)
    assert report["clean"] is True
    assert {} == report["handler_failures"]
    assert {} == report["departed"]


# --- processes started by hand, as on several hosts -----------------------------------------


class Launched:
    """Processes a test starts; all are killed and reaped when the test ends."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.processes: dict[str, subprocess.Popen[bytes]] = {}

    def start(self, name: str, *args: str) -> subprocess.Popen[bytes]:
        with (
            (self.folder / f"{name}.out").open("wb") as out,
            (self.folder / f"{name}.err").open("wb") as err,
        ):
            # The child holds its own copies of the two descriptors.
            process = subprocess.Popen(
                [sys.executable, "-m", "warband", *args],
                cwd=REPO,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
            )
        self.processes[name] = process
        return process

    def stderr(self, name: str) -> str:
        return (self.folder / f"{name}.err").read_text()

    def wait(self, name: str, timeout: float) -> int:
        try:
            return self.processes[name].wait(timeout)
        except subprocess.TimeoutExpired:
            output = self.stderr(name)
            raise AssertionError(f"{name} still runs after {timeout} s:\n{output}") from None

    def kill(self, name: str) -> None:
        process = self.processes[name]
        process.send_signal(signal.SIGKILL)
        process.wait(10)

    def kill_all(self) -> None:
        for process in self.processes.values():
            if process.poll() is None:
                process.kill()
            process.wait(10)


@pytest.fixture
def launched(tmp_path: Path) -> Iterator[Launched]:
    processes = Launched(tmp_path)
    try:
        yield processes
    finally:
        processes.kill_all()


def _tick_in(file: Path) -> int:
    try:
        return int(file.read_text() or 0)
    except (FileNotFoundError, ValueError):
        return 0


def _start_run_by_hand(
    launched: Launched, endpoint: str, tick_file: Path, *, ticks: int, broker_timeout: float
) -> list[str]:
    common = [
        "--connect",
        endpoint,
        "--scenario",
        LIVENESS,
        "--ticks",
        str(ticks),
        "--param",
        "pace=0.02",
        "--param",
        f"tick_file={tick_file}",
        "--broker-timeout",
        str(broker_timeout),
        "--tick-timeout",
        "60",
    ]
    result = launched.folder / "result.json"
    launched.start("clock", "agent", *common, "--id", "clock", "--result", str(result))
    for bot in ("bot-1", "bot-2"):
        launched.start(bot, "agent", *common, "--id", bot)
    return ["clock", "bot-1", "bot-2"]


@pytest.mark.processes
def test_a_restarted_broker_is_found_again_and_the_run_resumes(
    launched: Launched, tmp_path: Path
) -> None:
    endpoint = f"tcp://127.0.0.1:{free_tcp_port()}"
    tick_file = tmp_path / "tick"
    launched.start("broker", "broker", "--bind", endpoint)
    names = _start_run_by_hand(launched, endpoint, tick_file, ticks=150, broker_timeout=60)
    wait_until(lambda: _tick_in(tick_file) >= 5, 60, "tick 5")
    launched.kill("broker")
    stalled_at = _tick_in(tick_file)
    launched.start("broker-again", "broker", "--bind", endpoint)
    for name in names:
        assert 0 == launched.wait(name, 120), launched.stderr(name)
    result = json.loads((tmp_path / "result.json").read_text())
    assert 150 == result["ticks"]
    assert result["completed"] is True
    assert {} == result["departed"]
    assert 0 == result["tick_timeouts"]
    assert stalled_at < 150
    assert {"bot-1", "bot-2"} <= set(result["final_states"])
    assert "broker.back" in launched.stderr("bot-1")


@pytest.mark.processes
def test_when_the_broker_never_comes_back_every_agent_and_the_clock_exit_with_an_error(
    launched: Launched, tmp_path: Path
) -> None:
    endpoint = f"tcp://127.0.0.1:{free_tcp_port()}"
    tick_file = tmp_path / "tick"
    launched.start("broker", "broker", "--bind", endpoint)
    # --broker-timeout bounds the wait for a first broker too: start the agents once it routes.
    wait_until(lambda: "routing on" in launched.stderr("broker"), 60, "the broker to route")
    names = _start_run_by_hand(launched, endpoint, tick_file, ticks=100_000, broker_timeout=2)
    wait_until(lambda: _tick_in(tick_file) >= 3, 60, "tick 3")
    launched.kill("broker")
    for name in names:
        assert 1 == launched.wait(name, 60), launched.stderr(name)
        error_lines = [
            line for line in launched.stderr(name).splitlines() if "warband: error:" in line
        ]
        assert 1 == len(error_lines), launched.stderr(name)
        assert "did not come back within 2 s" in error_lines[0]


@pytest.mark.processes
def test_a_clock_whose_participants_never_connect_exits_non_zero(
    launched: Launched, tmp_path: Path
) -> None:
    endpoint = f"tcp://127.0.0.1:{free_tcp_port()}"
    launched.start("broker", "broker", "--bind", endpoint)
    result = tmp_path / "result.json"
    launched.start(
        "clock",
        "agent",
        "--connect",
        endpoint,
        "--scenario",
        LIVENESS,
        "--id",
        "clock",
        "--start-timeout",
        "1",
        "--result",
        str(result),
    )
    assert 1 == launched.wait("clock", 60)
    assert "the run never started: participants never connected: bot-1, bot-2" in (
        launched.stderr("clock")
    )
    assert json.loads(result.read_text())["started"] is False


@pytest.mark.processes
def test_json_ends_the_output_with_completed_false_when_the_broker_process_dies(
    tmp_path: Path,
) -> None:
    tick_file = tmp_path / "tick"
    command = [
        sys.executable,
        "-m",
        "warband",
        "run",
        LIVENESS,
        "--processes",
        "--json",
        "--ticks",
        "100000",
        "--param",
        "pace=0.02",
        "--param",
        f"tick_file={tick_file}",
    ]
    launcher = subprocess.Popen(
        command, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        wait_until(lambda: _tick_in(tick_file) >= 3, 60, "tick 3")
        broker = child_running(launcher.pid, "broker")
        os.kill(broker, signal.SIGKILL)
        stdout, stderr = launcher.communicate(timeout=60)
    finally:
        if launcher.poll() is None:
            launcher.kill()
        launcher.wait(10)
    assert 1 == launcher.returncode
    report = last_json_line(stdout)
    assert report["completed"] is False
    assert "failure" == report["outcome"]
    assert "broker" in str(report["finish_reason"])
    assert "Traceback" not in stderr
