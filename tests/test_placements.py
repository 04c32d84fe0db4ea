"""The three placements of a run, for real: one process, ``--workers N`` (many agents per worker
process) and ``--processes`` (one per agent) send the same messages; a worker whose loop is held
for seconds departs nobody; ``warband agent --ids`` runs several agents of a run in one process."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from .conftest import REPO, CommandResult, last_json_line
from .runs import PLACEMENTS, ScenarioRuns
from .test_cli import _agent_sends

Cli = Callable[..., CommandResult]
BUNDLED = sorted(p.name for p in (REPO / "scenarios").glob("*.py") if p.name != "warzone.py")
"""Every bundled scenario but Warzone, which tests/test_warzone_determinism.py plays at 6v6."""


@pytest.mark.processes
@pytest.mark.parametrize("scenario", BUNDLED)
def test_every_bundled_scenario_sends_the_same_messages_in_every_placement(
    scenario_runs: ScenarioRuns, scenario: str
) -> None:
    # With the scenario's defaults: the one-process and --processes runs are the ones the
    # scenario's own tests read (tests/runs.py); the three start side by side.
    runs = scenario_runs.placed(f"scenarios/{scenario}", placements=PLACEMENTS)
    for ran in runs.values():
        ran.summary()  # each run succeeded
    sends = {name: _agent_sends(ran.log) for name, ran in runs.items()}
    assert sends["one"], "the run sent no catalog message: nothing was compared"
    assert sends["one"] == sends["workers"]
    assert sends["one"] == sends["processes"]


@pytest.mark.processes
@pytest.mark.parametrize("how", ["sleep", "spin"])
def test_a_worker_whose_loop_is_held_for_seconds_departs_nobody(warband_cli: Cli, how: str) -> None:
    # Bot-1 holds its worker's loop 4.5 s at tick 3; its worker-mate bot-3 cannot ping either.
    # Actors ping every second: without the keeper, the broker departs both after 3 s silent.
    result = warband_cli(
        "run",
        "tests/scenarios/busy.py",
        *("--param", "hold=4.5", "--param", f"how={how}", "--workers", "2", "--json", "-q"),
    )
    summary = last_json_line(result.stdout)
    assert {"worker-1": ["bot-1", "bot-3"], "worker-2": ["bot-2", "bot-4"]} == summary["workers"]
    assert {} == summary["departed"], result.stderr
    assert ("success", True) == (summary["outcome"], summary["clean"]), summary["outcome_summary"]


@pytest.mark.processes
def test_a_killed_agent_in_a_shared_worker_leaves_alone_and_its_worker_plays_on(
    warband_cli: Cli,
) -> None:
    result = warband_cli(
        "run", "tests/scenarios/liveness.py", "--workers", "1", "--kill", "bot-1@3", "--json", "-q"
    )
    summary = last_json_line(result.stdout)
    assert 0 == result.returncode, result.stderr
    assert {"worker-1": ["bot-1", "bot-2"]} == summary["workers"]
    assert ["bot-1"] == list(summary["departed"])
    assert (0, 1) == (summary["restarts"], len(summary["pids"]["worker-1"]))
    assert {"bot-2": summary["ticks"]} == summary["outcome_details"]


@pytest.mark.processes
def test_warband_agent_ids_runs_several_agents_of_a_run_in_one_process(tmp_path: Path) -> None:
    endpoint = f"ipc://{tmp_path / 'broker.sock'}"
    common = ["agent", "--connect", endpoint, "--scenario", "scenarios/ping_pong.py"]
    result_file = tmp_path / "result.json"
    commands = {
        "broker": ["broker", "--bind", endpoint, "--quiet"],
        "clock": [*common, "--id", "clock", "--result", str(result_file), "--quiet"],
        "agents": [*common, "--ids", "commander,bot-1,bot-2"],
    }
    processes: dict[str, subprocess.Popen[bytes]] = {}
    try:
        for name, command in commands.items():
            processes[name] = subprocess.Popen(
                [sys.executable, "-m", "warband", *command],
                cwd=REPO,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        clock_code = processes["clock"].wait(timeout=120)
        agents_code = processes["agents"].wait(timeout=30)
    finally:
        for process in processes.values():
            if process.poll() is None:
                process.kill()
            process.wait()

    assert (0, 0) == (clock_code, agents_code)
    result = json.loads(result_file.read_text())
    assert ("success", {}) == (result["outcome"], result["departed"])
    assert {"commander", "bot-1", "bot-2"} <= set(result["final_states"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("run", "scenarios/ping_pong.py", "--workers", "0"),
            "--workers must be at least 1, got 0",
        ),
        (
            ("run", "scenarios/ping_pong.py", "--workers", "2", "--processes"),
            "--processes and --workers are two placements: pass one",
        ),
        (
            (
                "agent",
                "--connect",
                "inproc://x",
                "--scenario",
                "scenarios/ping_pong.py",
                "--ids",
                "clock,bot-1",
            ),
            "--ids names the clock 'clock' with other agents: the clock runs alone",
        ),
        (
            (
                "agent",
                "--connect",
                "inproc://x",
                "--scenario",
                "scenarios/ping_pong.py",
                "--ids",
                "bot-1,bot-2,bot-1",
            ),
            "--ids names bot-1 twice",
        ),
        (
            (
                "agent",
                "--connect",
                "inproc://x",
                "--scenario",
                "scenarios/ping_pong.py",
                "--ids",
                "bot-1,,bot-2",
            ),
            "--ids 'bot-1,,bot-2' has an empty id",
        ),
        (
            (
                "agent",
                "--connect",
                "inproc://x",
                "--scenario",
                "scenarios/ping_pong.py",
                "--ids",
                "bot-1,bot-9",
            ),
            "scenario 'ping_pong' has no agent 'bot-9'; known agents: clock, bot-1",
        ),
    ],
)
def test_bad_placements_are_one_clear_line(
    warband_cli: Cli, args: tuple[str, ...], message: str
) -> None:
    result = warband_cli(*args, timeout=60)
    assert 2 == result.returncode, result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
