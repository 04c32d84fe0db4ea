"""How a ``--processes`` run ends, run for real: on a signal, when its launcher is killed with
-9, on failure; and that it leaves no process and no temporary file behind.

Each test gives the launcher its own TMPDIR, so "nothing left behind" is an empty directory.
The processes of a run are found in /proc (the launcher's children share one process group).
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.proc import alive, child_running, children_of, group_members, stat, wait_until

from .conftest import REPO, last_json_line

pytestmark = [
    pytest.mark.processes,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)"),
]

ENDLESS = "tests/scenarios/endless.py"
CONTRACT_S = 5.0
"""A signalled run must be over within this many seconds (issue 8)."""
STARTUP_S = 60.0
"""Generous bound for a run to start ticking on a loaded machine."""


@dataclass
class Run:
    """One ``warband run --processes`` launcher, its output files and the processes it started."""

    launcher: subprocess.Popen[bytes]
    stdout: Path
    stderr: Path
    children: list[int] = field(default_factory=list)
    groups: set[int] = field(default_factory=set)

    def record_children(self, count: int) -> None:
        """Wait until the launcher has started ``count`` children; remember them."""

        def started() -> bool:
            self.children = children_of(self.launcher.pid)
            return len(self.children) >= count or self.launcher.poll() is not None

        wait_until(started, STARTUP_S, f"{count} children of the launcher")
        # A child read before it left for its own group is still in the launcher's, which is
        # this test runner's: never that one, or the cleanup SIGKILLs pytest itself.
        groups = {found[2] for pid in self.children if (found := stat(pid)) is not None}
        self.groups = groups - {os.getpgrp()}

    def survivors(self) -> list[int]:
        """Processes of the run still alive: recorded children and members of their groups."""
        living = {pid for pid in self.children if alive(pid)}
        for group in self.groups:
            living.update(group_members(group))
        return sorted(living)

    def kill_everything(self) -> None:
        for group in self.groups:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(group, signal.SIGKILL)
        for pid in self.children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if self.launcher.poll() is None:
            self.launcher.kill()
        self.launcher.wait()


@pytest.fixture
def run_tmp() -> Iterator[Path]:
    """An empty directory the launcher uses as TMPDIR (short: ipc paths are limited to ~100)."""
    path = Path(tempfile.mkdtemp(prefix="wb-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def start_run(run_tmp: Path, tmp_path: Path) -> Iterator[Callable[..., Run]]:
    """Start ``warband run ENDLESS --processes --json ARGS...``; everything is killed at the end."""
    runs: list[Run] = []

    def start(*args: str) -> Run:
        stdout, stderr = tmp_path / f"out-{len(runs)}", tmp_path / f"err-{len(runs)}"
        with stdout.open("wb") as out, stderr.open("wb") as err:
            launcher = subprocess.Popen(
                [sys.executable, "-m", "warband", "run", ENDLESS, "--processes", "--json", *args],
                cwd=REPO,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                env={**os.environ, "TMPDIR": str(run_tmp)},
            )
        run = Run(launcher, stdout, stderr)
        runs.append(run)
        return run

    yield start
    for run in runs:
        run.kill_everything()


def _start_ticking(start_run: Callable[..., Run], tmp_path: Path, *args: str) -> Run:
    """An endless run (broker, clock, 2 bots) that has reached tick 3."""
    marker = tmp_path / "ticking"
    run = start_run("--param", f"marker={marker}", *args)
    run.record_children(4)
    wait_until(lambda: marker.exists() or run.launcher.poll() is not None, STARTUP_S, "tick 3")
    assert run.launcher.poll() is None, run.stderr.read_text()
    return run


def _wait_for_exit(run: Run) -> None:
    """Wait for the launcher to exit, at most a generous multiple of the contract (the time
    it takes is a figure of `warband bench chaos --only clean-exit`, not asserted here)."""
    try:
        run.launcher.wait(timeout=3 * CONTRACT_S)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the launcher still runs {3 * CONTRACT_S} s later") from None


def _assert_no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr
    assert "Task exception was never retrieved" not in stderr, stderr
    assert "SystemExit" not in stderr, stderr


@pytest.mark.parametrize(
    ("signum", "name"),
    [(signal.SIGTERM, "SIGTERM"), (signal.SIGINT, "SIGINT"), (signal.SIGHUP, "SIGHUP")],
)
def test_a_signal_to_the_launcher_ends_the_whole_run_and_leaves_nothing_behind(
    start_run: Callable[..., Run], run_tmp: Path, tmp_path: Path, signum: int, name: str
) -> None:
    run = _start_ticking(start_run, tmp_path)
    known = _known_ticks(run, run_tmp, 3)

    run.launcher.send_signal(signum)
    _wait_for_exit(run)

    stderr = run.stderr.read_text()
    assert 128 + signum == run.launcher.returncode, stderr
    wait_until(lambda: not run.survivors(), CONTRACT_S, "the run's processes to end")
    assert [] == sorted(p.name for p in run_tmp.iterdir())
    assert f"warband: interrupted by {name}" in stderr
    _assert_no_traceback(stderr)
    summary = last_json_line(run.stdout.read_text())
    assert (False, f"interrupted by {name}", "failure") == (
        summary["completed"],
        summary["finish_reason"],
        summary["outcome"],
    )
    # What was known of the run when it stopped (issue 25, finding 7), not zeros.
    assert summary["ticks"] >= known >= 3, summary
    assert summary["messages_sent"] >= known, summary
    assert {"broker", "clock", "bot-1", "bot-2"} == set(summary["pids"]), summary
    assert 4 == summary["processes"]


def _clock_progress(run_tmp: Path) -> int:
    """Ticks the clock of the run in ``run_tmp`` last said it completed (its sign of life for
    the launcher, ``clock.alive``): what the launcher knows of the run if it breaks now."""
    for file in run_tmp.glob("warband-run-*/clock.alive"):
        with contextlib.suppress(OSError, ValueError):
            return int(json.loads(file.read_bytes())["ticks"])
    return 0


def _known_ticks(run: Run, run_tmp: Path, at_least: int) -> int:
    wait_until(
        lambda: _clock_progress(run_tmp) >= at_least or run.launcher.poll() is not None,
        STARTUP_S,
        f"the launcher to know of tick {at_least}",
    )
    return _clock_progress(run_tmp)


def test_a_stopped_clock_ends_the_run_within_seconds_and_the_report_names_it(
    start_run: Callable[..., Run], run_tmp: Path, tmp_path: Path
) -> None:
    # Issue 25, finding 4: SIGSTOP keeps the clock's connections open and says nothing, as a
    # hung process or a vanished host would; the agents give up on it, the launcher must too.
    run = _start_ticking(start_run, tmp_path)
    known = _known_ticks(run, run_tmp, 3)
    os.kill(child_running(run.launcher.pid, "clock"), signal.SIGSTOP)

    try:
        run.launcher.wait(timeout=60)
    except subprocess.TimeoutExpired:
        raise AssertionError("the launcher still runs 60 s after its clock stopped") from None

    stderr = run.stderr.read_text()
    assert 1 == run.launcher.returncode, stderr
    summary = last_json_line(run.stdout.read_text())
    assert summary["completed"] is False
    assert "the clock 'clock' stopped answering" in summary["finish_reason"], summary
    assert summary["ticks"] >= known
    wait_until(lambda: not run.survivors(), CONTRACT_S, "the run's processes to end")
    assert [] == sorted(p.name for p in run_tmp.iterdir())
    _assert_no_traceback(stderr)


@pytest.mark.parametrize(
    ("victim", "signum", "culprit"),
    [
        ("clock", signal.SIGKILL, "the clock process 'clock' was killed by SIGKILL"),
        ("broker", signal.SIGSTOP, "the broker stopped answering"),
        ("broker", signal.SIGKILL, "the broker process was killed by SIGKILL"),
    ],
    ids=["clock-killed", "broker-stopped", "broker-killed"],
)
def test_a_broken_run_reports_what_was_known_and_names_the_culprit(
    start_run: Callable[..., Run],
    run_tmp: Path,
    tmp_path: Path,
    victim: str,
    signum: int,
    culprit: str,
) -> None:
    # Issue 25, finding 7: the JSON line tells the truth after a failure.
    log_dir = tmp_path / "logs"
    run = _start_ticking(start_run, tmp_path, "--log", str(log_dir))
    known = _known_ticks(run, run_tmp, 3)
    os.kill(child_running(run.launcher.pid, victim), signum)

    try:
        run.launcher.wait(timeout=60)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the launcher still runs 60 s after {victim} broke") from None

    stderr = run.stderr.read_text()
    assert 1 == run.launcher.returncode, stderr
    summary = last_json_line(run.stdout.read_text())
    assert summary["completed"] is False
    assert summary["finish_reason"].startswith(culprit), summary["finish_reason"]
    assert "--log DIR" not in summary["finish_reason"]
    assert summary["ticks"] >= known
    assert summary["messages_sent"] >= known, summary
    assert 4 == summary["processes"]
    assert {"broker", "clock", "bot-1", "bot-2"} == set(summary["pids"])
    assert str(log_dir) == summary["log_dir"]
    wait_until(lambda: not run.survivors(), CONTRACT_S, "the run's processes to end")
    _assert_no_traceback(stderr)


def test_the_children_end_on_their_own_when_the_launcher_is_killed_with_minus_9(
    start_run: Callable[..., Run], run_tmp: Path, tmp_path: Path
) -> None:
    run = _start_ticking(start_run, tmp_path)

    run.launcher.kill()
    run.launcher.wait()

    wait_until(lambda: not run.survivors(), CONTRACT_S, "the orphaned processes to end")
    _assert_no_traceback(run.stderr.read_text())
    # Issue 25, finding 10: the dead launcher could not remove its run's directory; the next
    # run removes it (its launcher's pid is gone), and its own, and leaves the temp dir empty.
    next_run = start_run("--ticks", "5")
    next_run.record_children(4)
    _wait_for_exit(next_run)
    assert 0 == next_run.launcher.returncode, next_run.stderr.read_text()
    wait_until(lambda: not next_run.survivors(), CONTRACT_S, "the next run's processes to end")
    assert [] == sorted(p.name for p in run_tmp.iterdir())


def test_a_failed_run_removes_its_temporary_directory_and_socket(
    start_run: Callable[..., Run], run_tmp: Path, tmp_path: Path
) -> None:
    run = _start_ticking(start_run, tmp_path, "--param", "kill_broker_at=20")

    _wait_for_exit(run)

    stderr = run.stderr.read_text()
    assert 1 == run.launcher.returncode, stderr
    assert "broker" in stderr
    wait_until(lambda: not run.survivors(), CONTRACT_S, "the run's processes to end")
    assert [] == sorted(p.name for p in run_tmp.iterdir())


def test_a_good_run_removes_its_temporary_directory(
    start_run: Callable[..., Run], run_tmp: Path
) -> None:
    run = start_run("--ticks", "5")
    run.record_children(4)

    _wait_for_exit(run)

    assert 0 == run.launcher.returncode, run.stderr.read_text()
    assert True is last_json_line(run.stdout.read_text())["completed"]
    wait_until(lambda: not run.survivors(), CONTRACT_S, "the run's processes to end")
    assert [] == sorted(p.name for p in run_tmp.iterdir())


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_ends_a_one_process_run_cleanly(
    tmp_path: Path, run_tmp: Path, signum: int
) -> None:
    marker = tmp_path / "ticking"
    stdout, stderr = tmp_path / "out", tmp_path / "err"
    with stdout.open("wb") as out, stderr.open("wb") as err:
        launcher = subprocess.Popen(
            [sys.executable, "-m", "warband", "run", ENDLESS, "--json", f"--param=marker={marker}"],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env={**os.environ, "TMPDIR": str(run_tmp)},
        )
    try:
        wait_until(lambda: marker.exists() or launcher.poll() is not None, STARTUP_S, "tick 3")
        launcher.send_signal(signum)
        launcher.wait(timeout=3 * CONTRACT_S)
    finally:
        if launcher.poll() is None:
            launcher.kill()
        launcher.wait()

    text = stderr.read_text()
    assert 128 + signum == launcher.returncode, text
    assert f"warband: interrupted by {signal.Signals(signum).name}" in text
    _assert_no_traceback(text)
    summary = last_json_line(stdout.read_text())
    assert False is summary["completed"]
    # The marker is written during tick 3: ticks 1 and 2 had been completed when the signal came.
    assert summary["ticks"] >= 2, summary
    assert summary["messages_sent"] > 0, summary


def test_the_supervisor_puts_its_children_in_one_group_and_kills_one_that_ignores_sigterm(
    tmp_path: Path,
) -> None:
    from warband.messaging.supervisor import Supervisor

    stubborn = (
        "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
        "open(sys.argv[1], 'w').close(); time.sleep(600)"
    )
    supervisor = Supervisor()
    try:
        first = supervisor.start("first", [sys.executable, "-c", stubborn, str(tmp_path / "a")])
        second = supervisor.start("second", [sys.executable, "-c", stubborn, str(tmp_path / "b")])
        wait_until(
            lambda: (tmp_path / "a").exists() and (tmp_path / "b").exists(),
            STARTUP_S,
            "both children to ignore SIGTERM",
        )
        groups = {os.getpgid(first.process.pid), os.getpgid(second.process.pid)}
        assert {first.process.pid} == groups
        assert os.getpgrp() not in groups

        supervisor.stop_all(grace=0.5)

        assert (-signal.SIGKILL, -signal.SIGKILL) == (
            first.process.returncode,
            second.process.returncode,
        )
    finally:
        for managed in supervisor.processes.values():
            if managed.process.poll() is None:
                managed.process.kill()
            managed.process.wait()


def _catches(pid: int, signum: int) -> bool:
    """True once process ``pid`` has a handler for ``signum`` (its SigCgt mask in /proc)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:
        return False
    caught = next(line for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(caught.split()[1], 16) & (1 << (signum - 1)))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_stops_a_standalone_agent_and_broker_cleanly(
    run_tmp: Path, tmp_path: Path, signum: int
) -> None:
    endpoint = f"ipc://{run_tmp / 'broker.sock'}"
    command = [sys.executable, "-m", "warband"]
    errors = {name: tmp_path / f"{name}.err" for name in ("broker", "agent")}
    processes: dict[str, subprocess.Popen[bytes]] = {}
    try:
        with errors["broker"].open("wb") as err:
            processes["broker"] = subprocess.Popen(
                [*command, "broker", "--bind", endpoint], cwd=REPO, stderr=err
            )
        with errors["agent"].open("wb") as err:
            processes["agent"] = subprocess.Popen(
                [*command, "agent", "--connect", endpoint, "--scenario", ENDLESS, "--id", "bot-1"],
                cwd=REPO,
                stderr=err,
            )
        # SIGHUP is the last of the three handlers each installs (Python catches SIGINT anyway).
        for name, process in processes.items():
            ready = functools.partial(_catches, process.pid, signal.SIGHUP)
            wait_until(ready, STARTUP_S, f"{name} to handle signals")

        for process in (processes["agent"], processes["broker"]):
            process.send_signal(signum)
            process.wait(timeout=3 * CONTRACT_S)
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
            process.wait()

    assert (128 + signum, 0) == (processes["agent"].returncode, processes["broker"].returncode)
    for file in errors.values():
        _assert_no_traceback(file.read_text())
    assert [] == sorted(p.name for p in run_tmp.iterdir())
