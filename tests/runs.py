"""Runs of ``warband run`` shared by the tests that read them (the ``scenario_runs`` fixture).

Several tests check different things about the same run: its outcome, its trace, the same
run with ``--processes``. Each such run is started once per session and every test reads its
summary and its log directory; a run's arguments, scenario and placement are its key, so two
tests share a run only when they would have started exactly the same command. A failed run
fails every test that reads it, with its stderr.
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
        self._done: dict[tuple[str, tuple[str, ...], str], Ran] = {}

    def run(self, scenario: str, *args: str, placement: str = "one") -> Ran:
        """The run of ``scenario`` with ``args`` in ``placement``, started if it is not done."""
        return self.placed(scenario, *args, placements=(placement,))[placement]

    def placed(self, scenario: str, *args: str, placements: Iterable[str]) -> dict[str, Ran]:
        """The runs of ``scenario`` with ``args`` in each of ``placements``; those not done yet
        run side by side (most of their time is processes starting)."""
        wanted = list(placements)
        unknown = [name for name in wanted if name not in PLACEMENTS]
        assert not unknown, f"unknown placements {unknown}; known: {sorted(PLACEMENTS)}"
        started: dict[str, tuple[tuple[str, ...], Path, subprocess.Popen[str]]] = {}
        try:
            for name in wanted:
                if (scenario, args, name) in self._done:
                    continue
                log = self._folder / f"run-{len(self._done) + len(started)}"
                command = ("run", scenario, *args, *PLACEMENTS[name], "--json", "-q")
                process = subprocess.Popen(
                    [sys.executable, "-m", "warband", *command, "--log", str(log)],
                    cwd=REPO,
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                started[name] = (command, log, process)
            for name, (command, log, process) in started.items():
                stdout, stderr = process.communicate(timeout=RUN_TIMEOUT_S)
                ran = Ran(command, process.returncode, stdout, stderr, log)
                self._done[(scenario, args, name)] = ran
        finally:
            for _, _, process in started.values():
                if process.poll() is None:
                    process.kill()  # its children end with it (warband.messaging.supervisor)
                process.wait()
        return {name: self._done[(scenario, args, name)] for name in wanted}
