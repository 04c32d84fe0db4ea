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
    """Every JSON event of every ``*.jsonl`` file in ``log_dir``, in file order."""
    events = []
    for file in sorted(log_dir.glob("*.jsonl")):
        for line in file.read_text().splitlines():
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


SHARED_SETUPS = {
    "chaos/test_stuck_actor.py": "bench-chaos-stuck-blocked",
    "chaos/test_bench_chaos.py": "bench-chaos-stuck-blocked",
    "test_placements.py": "bundled-scenario-runs",
    "test_cli.py": "bundled-scenario-runs",
    "test_prison_escape.py": "bundled-scenario-runs",
    "test_skirmish.py": "bundled-scenario-runs",
    "test_room_clearing.py": "bundled-scenario-runs",
    "test_fear_scenario.py": "bundled-scenario-runs",
    "test_pirate_scenario.py": "bundled-scenario-runs",
}
"""Files whose tests read one session-scoped run between them (the chaos conftest's bench run;
scenario_runs' runs of a bundled scenario that test_placements reads too): under pytest-xdist
they share a worker, so each run is still started once. tests/view/ shares its recordings."""


def xdist_group_of(path: Path) -> str:
    """The pytest-xdist group of a test file: its shared setup's, else the file itself."""
    relative = path.relative_to(REPO / "tests").as_posix()
    if relative.startswith("view/"):
        return "view-recordings"
    return SHARED_SETUPS.get(relative, relative)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--dist loadgroup``, a file's tests run in one worker: its module-scoped runs
    (test_warzone's matches played two at a time, a module's broker) are started once, as in a
    run without xdist. Without pytest-xdist the suite runs as before."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(xdist_group_of(item.path)))
