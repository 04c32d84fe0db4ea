"""Closed pipes end a command as SIGPIPE ends a Unix tool (issue 25, finding 6): `warband run
... | head -1` exits promptly with status 141, without a traceback, and leaves no process and no
temporary file behind; so do `trace`, `explain`, `sweep` and a script calling
`warband.testing.run_actors`.

Each test runs the real command with its output in a real pipe and closes the pipe's read end
as `head` does when it has read enough. Every process a test starts is killed and reaped when
the test ends, pass or fail.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.proc import alive, children_of, wait_until

from .conftest import REPO

pytestmark = [
    pytest.mark.processes,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc (Linux)"),
]

ENDLESS = "tests/scenarios/endless.py"
COIN = "tests/scenarios/coin.py"
SIGPIPE_STATUS = 128 + signal.SIGPIPE
EXIT_S = 60.0
"""Generous bound for a command to end once its pipe closed (it takes well under a second)."""


@pytest.fixture
def run_tmp() -> Iterator[Path]:
    """An empty TMPDIR for the command: a run must leave it empty."""
    path = Path(tempfile.mkdtemp(prefix="wb-", dir="/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


class Piped:
    """A command whose stdout (and, with ``merged``, stderr) is a pipe read like ``head -1``."""

    def __init__(self, argv: list[str], tmp: Path, errors: Path, *, merged: bool) -> None:
        self.errors = errors
        self.children: list[int] = []
        with errors.open("wb") as err:
            self.process = subprocess.Popen(
                argv,
                cwd=REPO,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT if merged else err,
                env={**os.environ, "TMPDIR": str(tmp)},
            )

    def first_line(self) -> bytes:
        assert self.process.stdout is not None
        return self.process.stdout.readline()

    def close_reader(self) -> None:
        """Close the read end, as `head` does when it exits."""
        self.children = children_of(self.process.pid)
        assert self.process.stdout is not None
        self.process.stdout.close()

    def wait(self) -> int:
        try:
            return self.process.wait(EXIT_S)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"still running {EXIT_S} s after its pipe closed") from None

    def stderr(self) -> str:
        return self.errors.read_text(errors="replace")

    def kill(self) -> None:
        for pid in children_of(self.process.pid) + self.children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


@pytest.fixture
def piped(run_tmp: Path, tmp_path: Path) -> Iterator[list[Piped]]:
    started: list[Piped] = []
    yield started
    for command in started:
        command.kill()


def _start(
    piped: list[Piped], run_tmp: Path, tmp_path: Path, *args: str, merged: bool = False
) -> Piped:
    errors = tmp_path / f"stderr-{len(piped)}"
    command = Piped([sys.executable, "-m", "warband", *args], run_tmp, errors, merged=merged)
    piped.append(command)
    return command


def _assert_quiet_end(command: Piped) -> None:
    stderr = command.stderr()
    assert SIGPIPE_STATUS == command.wait(), stderr
    assert "Traceback" not in stderr, stderr
    assert "Exception ignored" not in stderr, stderr
    wait_until(lambda: not any(alive(pid) for pid in command.children), 30, "its children")


@pytest.mark.parametrize("processes", [False, True], ids=["one-process", "processes"])
def test_a_run_piped_into_head_ends_at_once_with_status_141(
    piped: list[Piped], run_tmp: Path, tmp_path: Path, processes: bool
) -> None:
    # `warband run ENDLESS 2>&1 | head -1`: the first line is the progress line "starting".
    extra = ["--processes"] if processes else []
    run = _start(piped, run_tmp, tmp_path, "run", ENDLESS, *extra, merged=True)
    assert b"starting" in run.first_line()
    run.close_reader()

    assert SIGPIPE_STATUS == run.wait()
    wait_until(lambda: not any(alive(pid) for pid in run.children), 30, "the run's processes")
    assert [] == list(run_tmp.iterdir())


@pytest.mark.parametrize("processes", [False, True], ids=["one-process", "processes"])
def test_a_quiet_run_whose_stdout_closes_stops_without_waiting_for_its_next_write(
    piped: list[Piped], run_tmp: Path, tmp_path: Path, processes: bool
) -> None:
    # `--json -q` writes nothing until the run ends: an endless run must notice all the same.
    marker = tmp_path / "ticking"
    extra = ["--processes"] if processes else []
    args = ["run", ENDLESS, *extra, "--json", "-q", "--param", f"marker={marker}"]
    run = _start(piped, run_tmp, tmp_path, *args)
    wait_until(lambda: marker.exists() or run.process.poll() is not None, 60, "tick 3")
    run.close_reader()

    _assert_quiet_end(run)
    assert "interrupted by SIGPIPE" in run.stderr()
    assert [] == list(run_tmp.iterdir())


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("logs")
    subprocess.run(
        [sys.executable, "-m", "warband", "run", "scenarios/skirmish.py", "-q", "--log", folder],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=True,
        timeout=300,
    )
    return folder


@pytest.mark.parametrize("command", ["trace", "explain"])
def test_trace_and_explain_piped_into_head_end_with_status_141(
    piped: list[Piped], run_tmp: Path, tmp_path: Path, log_dir: Path, command: str
) -> None:
    args = [command, str(log_dir)]
    if command == "explain":
        args += ["--agent", "red-0", "--tick", "5"]
    reading = _start(piped, run_tmp, tmp_path, *args)
    reading.close_reader()  # before it writes a line: its first write finds no reader

    _assert_quiet_end(reading)


def test_a_sweep_piped_into_head_stops_its_runs_and_ends_with_status_141(
    piped: list[Piped], run_tmp: Path, tmp_path: Path
) -> None:
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    args = ["sweep", COIN, "--seeds", "1000", "--jobs", "2", "--ticks", "100000000"]
    sweep = _start(piped, run_tmp, tmp_path, *args, "--param", f"pid_dir={pid_dir}", merged=True)
    assert b"[sweep]" in sweep.first_line()
    wait_until(lambda: len(list(pid_dir.iterdir())) == 2, 60, "two runs under way")
    runs = [int(file.read_text()) for file in pid_dir.iterdir()]
    sweep.close_reader()

    assert SIGPIPE_STATUS == sweep.wait()
    wait_until(lambda: not any(alive(pid) for pid in runs), 30, f"runs {runs} to end")


SCRIPT = """
import asyncio
from warband import Actor
from warband.testing import run_actors

class Talker(Actor):
    def on_tick(self, tick: int) -> None:
        print(f"{self.id} tick {tick}", flush=True)

asyncio.run(run_actors([Talker("a"), Talker("b")], ticks=100_000_000))
"""


def test_a_script_running_actors_piped_into_head_ends_with_status_141(
    piped: list[Piped], run_tmp: Path, tmp_path: Path
) -> None:
    errors = tmp_path / "script.err"
    script = Piped([sys.executable, "-c", SCRIPT], run_tmp, errors, merged=False)
    piped.append(script)
    assert script.first_line()  # structlog's default logger writes to stdout too
    script.close_reader()

    _assert_quiet_end(script)
