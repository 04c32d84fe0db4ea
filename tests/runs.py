"""Runs of ``warband run`` shared by the tests that read them (the ``scenario_runs`` fixture).

Several tests check different things about the same run: its outcome, its trace, the same
run with ``--processes``. Each such run is started once per session and every test reads its
summary and its log directory; a run's arguments, scenario and placement are its key, so two
tests share a run only when they would have started exactly the same command. A failed run
fails every test that reads it, with its stderr.

A file whose tests each read a different one-process run starts them all at its first test,
two at a time (``side_by_side``): the runs are independent and deterministic, so what each
test reads is the run it would have started alone, and a 2-core machine plays two at once.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import REPO, last_json_line

PLACEMENTS = {"one": (), "workers": ("--workers", "2"), "processes": ("--processes",)}
"""The three placements of a run and the flags that choose them."""
RUN_TIMEOUT_S = 240.0
"""Only stops a hung run: nothing here asserts how fast a run is."""
SIDE_BY_SIDE = 2
"""One-process runs started at once by :meth:`ScenarioRuns.side_by_side`: one a core (CI has
two), so that a batch takes about half as long as the same runs one after another."""

RunKey = tuple[str, tuple[str, ...], str]
"""A run's scenario, arguments and placement."""


@dataclass(frozen=True)
class Ran:
    """One finished ``warband run SCENARIO --json -q ARGS --log LOG``."""

    command: tuple[str, ...]
    returncode: int
    stdout: str
    stderr: str
    log: Path

    def summary(self) -> dict[str, Any]:
        """The run's JSON summary (a copy: a test may change it), once the run succeeded."""
        assert 0 == self.returncode, f"{' '.join(self.command)}:\n{self.stderr}"
        return copy.deepcopy(last_json_line(self.stdout))


class ScenarioRuns:
    """Every run started for the session, by (scenario, arguments, placement)."""

    def __init__(self, folder: Path) -> None:
        self._folder = folder
        self._done: dict[RunKey, Ran] = {}

    def run(self, scenario: str, *args: str, placement: str = "one") -> Ran:
        """The run of ``scenario`` with ``args`` in ``placement``, started if it is not done."""
        return self.placed(scenario, *args, placements=(placement,))[placement]

    def placed(self, scenario: str, *args: str, placements: Iterable[str]) -> dict[str, Ran]:
        """The runs of ``scenario`` with ``args`` in each of ``placements``; those not done yet
        run side by side (most of their time is processes starting)."""
        wanted = list(placements)
        unknown = [name for name in wanted if name not in PLACEMENTS]
        assert not unknown, f"unknown placements {unknown}; known: {sorted(PLACEMENTS)}"
        keys = [(scenario, args, name) for name in wanted]
        self._start_side_by_side(keys, at_once=len(keys))
        return {name: self._done[key] for name, key in zip(wanted, keys, strict=True)}

    def side_by_side(
        self, runs: Iterable[tuple[str, tuple[str, ...]]], at_once: int = SIDE_BY_SIDE
    ) -> list[Ran]:
        """The one-process runs of each (scenario, arguments) of ``runs``, in order; those not
        done yet run ``at_once`` at a time. For a file whose tests each read a different run:
        one test starts them all, and the tests read them as they would their own."""
        keys = [(scenario, args, "one") for scenario, args in runs]
        self._start_side_by_side(keys, at_once)
        return [self._done[key] for key in keys]

    def _start_side_by_side(self, keys: list[RunKey], at_once: int) -> None:
        """Start the runs of ``keys`` not done yet, at most ``at_once`` at a time, and wait for
        each; every process started is killed and reaped on the way out, whatever happens."""
        waiting = [key for key in dict.fromkeys(keys) if key not in self._done]
        started: dict[RunKey, tuple[tuple[str, ...], Path, subprocess.Popen[str]]] = {}
        try:
            while waiting or started:
                while waiting and len(started) < at_once:
                    key = waiting.pop(0)
                    started[key] = self._start(key, len(self._done) + len(started))
                key = next(iter(started))  # the oldest: runs of a batch take alike
                command, log, process = started[key]
                stdout, stderr = process.communicate(timeout=RUN_TIMEOUT_S)
                self._done[key] = Ran(command, process.returncode, stdout, stderr, log)
                del started[key]
        finally:
            for _, _, process in started.values():
                if process.poll() is None:
                    process.kill()  # its children end with it (warband.messaging.supervisor)
                process.wait()

    def _start(
        self, key: RunKey, number: int
    ) -> tuple[tuple[str, ...], Path, subprocess.Popen[str]]:
        scenario, args, placement = key
        log = self._folder / f"run-{number}"
        command = ("run", scenario, *args, *PLACEMENTS[placement], "--json", "-q")
        process = subprocess.Popen(
            [sys.executable, "-m", "warband", *command, "--log", str(log)],
            cwd=REPO,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        return command, log, process
