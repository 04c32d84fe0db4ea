"""What every benchmark shares: its error, its percentile, its child processes and callgrind.

A benchmark module imports this as ``bench.measure`` after putting the repository on
``sys.path`` (``warband bench NAME`` runs a benchmark file by its path).
"""

from __future__ import annotations

import math
import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

import warband
from warband.exceptions import WarbandError

EXIT_TIMEOUT_S = 10.0
"""How long a child process may take to exit once told to, or once terminated."""


class BenchmarkError(WarbandError):
    """A benchmark could not run what it must run: a process failed, hung or reported
    something inconsistent, a match never started, a planner of ours found no plan."""


def percentile(samples: Sequence[float], fraction: float) -> float:
    """The nearest-rank ``fraction`` percentile of ``samples`` (0 < fraction <= 1); raises
    :class:`BenchmarkError` when there are none."""
    if not samples:
        raise BenchmarkError("no samples were measured")
    ordered = sorted(samples)
    rank = max(1, math.ceil(fraction * len(ordered)))
    return float(ordered[rank - 1])


def run_callgrind(child: Sequence[str], out: Path) -> subprocess.CompletedProcess[str]:
    """Run the command ``child`` under ``valgrind --tool=callgrind``, which writes a dump
    (``out.1``, ``out.2``...) each time the child calls ``os.getloadavg()`` (the mark) and the
    rest into ``out``. ``PYTHONHASHSEED`` is 0, so two runs of the same code count the same.
    Raises :class:`BenchmarkError` when valgrind is missing or the run fails."""
    valgrind = shutil.which("valgrind")
    if valgrind is None:
        raise BenchmarkError("valgrind is not installed: install it, or pass --no-valgrind")
    command = [valgrind, "--tool=callgrind", "--dump-before=getloadavg"]
    command += [f"--callgrind-out-file={out}", *child]
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        tail = done.stderr[-2000:]
        raise BenchmarkError(f"the counted run failed (exit {done.returncode}):\n{tail}")
    return done


def callgrind_instructions(dump: Path) -> int:
    """The instructions a callgrind dump (or its final output file) counted."""
    for line in dump.read_text().splitlines():
        if line.startswith(("summary:", "totals:")):
            return int(line.split()[1])
    raise BenchmarkError(f"{dump}: no summary line; is it a callgrind dump?")


class Child:
    """One benchmark process: ``script`` run with ``--role=ROLE``; its stdout read line by line.

    A reader thread turns stdout into a queue so every wait has a timeout, and :meth:`reap`
    always leaves the process dead and its pipes closed. ``wrapper`` is a command the process
    runs under (valgrind); with ``stdin`` the benchmark can :meth:`tell` the process lines.
    """

    def __init__(
        self,
        script: Path,
        role: str,
        options: list[str],
        *,
        wrapper: Sequence[str] = (),
        stdin: bool = False,
    ) -> None:
        self.role = role
        env = dict(os.environ)
        # The child imports the same warband as this process, wherever it was imported from.
        package_root = str(Path(warband.__file__).resolve().parent.parent)
        env["PYTHONPATH"] = os.pathsep.join([package_root, *filter(None, [env.get("PYTHONPATH")])])
        self._process = subprocess.Popen(
            [
                *wrapper,
                sys.executable,
                str(script),
                f"--role={role}",
                f"--parent={os.getpid()}",
                *options,
            ],
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._reader = threading.Thread(target=self._read, name=f"bench-{role}", daemon=True)
        self._reader.start()

    @property
    def pid(self) -> int:
        """The process id (valgrind's too: it runs the program in its own process)."""
        return self._process.pid

    def _read(self) -> None:
        stdout = self._process.stdout
        assert stdout is not None
        for line in stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def tell(self, line: str) -> None:
        """Write ``line`` to the process's stdin (started with ``stdin=True``)."""
        stdin = self._process.stdin
        assert stdin is not None, f"{self.role} was started without a stdin pipe"
        try:
            stdin.write(line + "\n")
            stdin.flush()
        except BrokenPipeError:
            code = self._process.wait()
            raise BenchmarkError(f"{self.role} exited with code {code} before reading") from None

    def line(self, timeout: float) -> str:
        """The next stdout line; BenchmarkError if the process ends or stays silent."""
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise BenchmarkError(f"{self.role} printed nothing for {timeout:.0f} s") from None
        if line is None:
            code = self._process.wait()
            raise BenchmarkError(f"{self.role} exited with code {code} before answering")
        return line

    def expect(self, expected: str, timeout: float) -> None:
        line = self.line(timeout)
        if line != expected:
            raise BenchmarkError(f"{self.role} printed {line[:200]!r}, expected {expected!r}")

    def wait_exit(self, timeout: float) -> None:
        try:
            code = self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            raise BenchmarkError(f"{self.role} did not exit within {timeout:.0f} s") from None
        if code != 0:
            raise BenchmarkError(f"{self.role} exited with code {code}")

    def reap(self) -> None:
        """Terminate, then kill if needed, wait for the process, and close its pipes."""
        process = self._process
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(EXIT_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        self._reader.join(EXIT_TIMEOUT_S)
        for pipe in (process.stdout, process.stdin):
            if pipe is not None:
                pipe.close()
