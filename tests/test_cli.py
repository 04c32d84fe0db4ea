"""The ``warband`` command, run for real: one process, many processes, bad input, traces."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .conftest import REPO, TRACE_CONTRACT_KEYS, CommandResult, last_json_line, read_log_events
from .proc import free_tcp_port
from .runs import ScenarioRuns

Cli = Callable[..., CommandResult]
PING_PONG = "scenarios/ping_pong.py"
SUMMARY_KEYS = {
    "scenario",
    "seed",
    "ticks",
    "processes",
    "messages_sent",
    "messages_received",
    "outcome",
}


def test_run_in_one_process_ends_with_a_json_summary(warband_cli: Cli) -> None:
    result = warband_cli("run", PING_PONG, "--json", "--seed", "3")
    assert 0 == result.returncode, result.stderr
    summary = last_json_line(result.stdout)
    assert SUMMARY_KEYS <= summary.keys()
    assert ("ping_pong", 3, 1, "success") == (
        summary["scenario"],
        summary["seed"],
        summary["processes"],
        summary["outcome"],
    )
    assert summary["messages_sent"] > 0
    assert "orders completed" in result.stderr


def test_run_prints_a_human_summary_without_json(warband_cli: Cli) -> None:
    result = warband_cli("run", PING_PONG, "--param", "bots=3", "--quiet")
    assert 0 == result.returncode, result.stderr
    assert "scenario ping_pong: SUCCESS - 9/9 orders completed" in result.stdout


def test_scenario_file_runs_as_a_python_script() -> None:
    result = subprocess.run(
        [sys.executable, PING_PONG, "--json", "--quiet"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert 0 == result.returncode, result.stderr
    assert "success" == last_json_line(result.stdout)["outcome"]


def _message_events(log_dir: Path, event: str) -> list[dict[str, Any]]:
    return [e for e in read_log_events(log_dir) if e.get("event") == event]


def _agent_sends(log_dir: Path) -> list[tuple[Any, ...]]:
    """The catalog messages sent in a run, as comparable tuples in (tick, sender, seq) order."""
    sends = [
        e for e in _message_events(log_dir, "msg.send") if not str(e["msg_type"]).startswith("_")
    ]
    rows = [
        (e["tick"], e["sender"], e["msg_id"], e["msg_type"], e["recipient"], e["conversation"])
        for e in sends
    ]
    return sorted(rows, key=lambda r: (r[0], r[1], int(str(r[2]).rsplit(":", 1)[1])))


@pytest.mark.processes
def test_processes_run_one_process_per_actor_and_every_send_is_received(
    scenario_runs: ScenarioRuns,
) -> None:
    ran = scenario_runs.run(PING_PONG, placement="processes")  # test_placements' run too
    summary, log_dir = ran.summary(), ran.log
    assert "success" == summary["outcome"]
    assert {"broker", "clock", "commander", "bot-1", "bot-2"} == set(summary["pids"])
    pids = [pid for pids in summary["pids"].values() for pid in pids]
    assert len(pids) == len(set(pids)) == summary["processes"] == 5
    sends = _message_events(log_dir, "msg.send")
    recvs = _message_events(log_dir, "msg.recv")
    assert {e["pid"] for e in sends} >= {summary["pids"]["commander"][0]}
    received_ids = {e["msg_id"] for e in recvs}
    unreceived = [e for e in sends if e["msg_id"] not in received_ids]
    # The one exception: once the run has finished, the broker tells the watchers of an actor
    # that left (_Left) while they are leaving too, and a stopped actor reads nothing more. The
    # clock logs run.finish before any actor can leave, so the order below is causal, not luck.
    (finished,) = {e["timestamp"] for e in read_log_events(log_dir) if e["event"] == "run.finish"}
    lost = [e for e in unreceived if e["msg_type"] != "_Left" or e["timestamp"] < finished]
    assert [] == lost
    for key in TRACE_CONTRACT_KEYS:
        assert all(key in e for e in sends + recvs), key


@pytest.mark.processes
def test_same_seed_sends_the_same_messages_in_one_process_and_in_many(
    scenario_runs: ScenarioRuns,
) -> None:
    # The runs test_placements compares with --workers too (tests/runs.py starts each once).
    runs = scenario_runs.placed(PING_PONG, placements=("one", "processes"))
    for ran in runs.values():
        ran.summary()  # each run succeeded
    in_one = _agent_sends(runs["one"].log)
    assert len(in_one) > 50
    assert in_one == _agent_sends(runs["processes"].log)


@pytest.mark.processes
def test_a_killed_agent_process_is_restarted_and_the_run_goes_on(
    warband_cli: Cli, tmp_path: Path
) -> None:
    log_dir = tmp_path / "logs"
    result = warband_cli(
        "run",
        PING_PONG,
        "--processes",
        "--json",
        "--param",
        "crash=bot-1@4",
        "--log",
        str(log_dir),
        "--tick-timeout",
        "5",
    )
    assert 0 == result.returncode, result.stderr
    summary = last_json_line(result.stdout)
    assert ("success", 1) == (summary["outcome"], summary["restarts"])
    assert 2 == len(summary["pids"]["bot-1"])
    restarts = [e for e in read_log_events(log_dir) if e.get("event") == "process.restart"]
    assert ["bot-1"] == [e["process"] for e in restarts]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "scenarios/nope.py"], "scenario file 'scenarios/nope.py' does not exist"),
        (["run", PING_PONG, "--param", "speed=3"], "no parameter 'speed'; known parameters: bots"),
        (["run", PING_PONG, "--param", "bots=many"], "parameter 'bots' expects a whole number"),
        (["run", PING_PONG, "--param", "bots"], "--param expects KEY=VALUE"),
        (["run", PING_PONG, "--ticks", "0"], "--ticks must be at least 1"),
        (["run", "README.md"], "is not a Python file"),
    ],
)
def test_bad_input_exits_2_with_a_message_naming_the_problem(
    warband_cli: Cli, args: list[str], message: str
) -> None:
    result = warband_cli(*args)
    assert 2 == result.returncode
    assert message in result.stderr


def test_agent_with_an_unknown_id_lists_the_known_ones(warband_cli: Cli) -> None:
    result = warband_cli(
        "agent", "--connect", "inproc://x", "--scenario", PING_PONG, "--id", "bot-9"
    )
    assert 2 == result.returncode
    assert "no agent 'bot-9'; known agents: clock, bot-1, bot-2, commander" in result.stderr


def test_trace_renders_a_mermaid_sequence_diagram_of_a_run(
    warband_cli: Cli, scenario_runs: ScenarioRuns
) -> None:
    ran = scenario_runs.run(PING_PONG)  # test_placements' run too
    ran.summary()  # the run succeeded
    log_dir = ran.log
    result = warband_cli("trace", str(log_dir), "--format", "mermaid", "--type", "Order")
    assert 0 == result.returncode, result.stderr
    lines = result.stdout.splitlines()
    assert "sequenceDiagram" == lines[0].strip()
    assert 6 == sum(": Order" in line for line in lines if not line.startswith("%%"))
    assert "%% by type: Order 6" in lines  # the summary ends the diagram, as comments


@pytest.mark.processes
def test_processes_can_talk_over_tcp_like_agents_on_other_hosts(warband_cli: Cli) -> None:
    endpoint = f"tcp://127.0.0.1:{free_tcp_port()}"
    result = warband_cli("run", PING_PONG, "--processes", "--json", "--endpoint", endpoint, "-q")
    assert 0 == result.returncode, result.stderr
    assert "success" == last_json_line(result.stdout)["outcome"]


@pytest.mark.skipif(
    importlib.util.find_spec("uvloop") is None, reason="uvloop is not installed here"
)
def test_same_seed_sends_the_same_messages_on_uvloop_and_on_asyncios_loop(
    warband_cli: Cli, tmp_path: Path
) -> None:
    on_uvloop, on_asyncio = tmp_path / "uvloop", tmp_path / "asyncio"
    first = warband_cli(
        "run",
        PING_PONG,
        "--seed",
        "5",
        "--log",
        str(on_uvloop),
        "-q",
        env={"WARBAND_EVENT_LOOP": "uvloop"},
    )
    second = warband_cli(
        "run",
        PING_PONG,
        "--seed",
        "5",
        "--log",
        str(on_asyncio),
        "-q",
        env={"WARBAND_EVENT_LOOP": "asyncio"},
    )
    assert 0 == first.returncode, first.stderr
    assert 0 == second.returncode, second.stderr
    sends = _agent_sends(on_uvloop)
    assert len(sends) > 50
    assert sends == _agent_sends(on_asyncio)
