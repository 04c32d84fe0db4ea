"""Shared fixtures: the repository root and a helper to run the ``warband`` command for real."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from tests.runs import ScenarioRuns  # tests/runs.py reads this module's helpers

REPO = Path(__file__).resolve().parent.parent

TRACE_CONTRACT_KEYS = frozenset(
    {
        "event",
        "msg_id",
        "msg_type",
        "sender",
        "recipient",
        "conversation",
        "tick",
        "pid",
        "timestamp",
    }
)
"""The keys every msg.send / msg.recv event has, as the issue spells them (a user contract)."""


@pytest.fixture
def repo() -> Path:
    """The repository root (scenarios/ and bench/ live there)."""
    return REPO


CommandResult = subprocess.CompletedProcess[str]


@pytest.fixture
def warband_cli() -> Callable[..., CommandResult]:
    """Run ``python -m warband ARGS...`` in a child process; killed if it outlives ``timeout``."""

    def run(*args: str, timeout: float = 120, env: dict[str, str] | None = None) -> CommandResult:
        return subprocess.run(
            [sys.executable, "-m", "warband", *args],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=timeout,
            stdin=subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
        )

    return run


def last_json_line(output: str) -> dict[str, Any]:
    """The JSON object on the last non-empty line of ``output``."""
    lines = [line for line in output.splitlines() if line.strip()]
    assert lines, "the command printed nothing on stdout"
    parsed: dict[str, Any] = json.loads(lines[-1])
    return parsed


def read_log_events(log_dir: Path) -> list[dict[str, Any]]:
    """Every JSON event of every ``*.jsonl`` file in ``log_dir``, in file order.

    Only whole lines: a process still running may be writing its last one (a test that polled
    a live broker's log read half a line once)."""
    events = []
    for file in sorted(log_dir.glob("*.jsonl")):
        *whole, _partial = file.read_text().split("\n")
        for line in whole:
            if line.strip():
                event = json.loads(line)
                event["_file"] = file.name
                events.append(event)
    return events


def run_summary(cli: Callable[..., CommandResult], scenario: str, *args: str) -> dict[str, Any]:
    """``warband run SCENARIO --json -q ARGS...`` that must succeed; its JSON summary."""
    result = cli("run", scenario, "--json", "-q", *args)
    assert 0 == result.returncode, result.stderr
    return last_json_line(result.stdout)


@pytest.fixture(scope="session")
def scenario_runs(tmp_path_factory: pytest.TempPathFactory) -> ScenarioRuns:
    """The session's shared ``warband run`` runs (tests/runs.py): a run several tests read is
    started once."""
    from tests.runs import ScenarioRuns

    return ScenarioRuns(tmp_path_factory.mktemp("runs"))
