"""The prison escape: alice asks the others, one by one, to stand on the plate that opens her
bars; no commander. Each parameter's behaviour, in one process and with --processes."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CommandResult, read_log_events
from tests.runs import ScenarioRuns
from tests.test_cli import _agent_sends

Cli = Callable[..., CommandResult]
SCENARIO = "scenarios/prison_escape.py"
CONVERSATION = (
    "RequestTalk",
    "TalkReply",
    "RequestCooperation",
    "CooperationReply",
    "EndTalk",
    "CooperationResult",
)
ESCAPE_PLAN = "goal:Escape: Cooperate LeaveCell GoToKey TakeKey GoToExit UnlockExit StepOut"


def _run(runs: ScenarioRuns, *args: str, placement: str = "one") -> dict[str, Any]:
    """The summary of the session's run of the scenario with ``args`` (tests/runs.py)."""
    return runs.run(SCENARIO, *args, placement=placement).summary()


def _events(log_dir: Path, name: str) -> list[dict[str, Any]]:
    return [e for e in read_log_events(log_dir) if e.get("event") == name]


def test_a_willing_first_helper_opens_the_bars_and_alice_escapes(
    scenario_runs: ScenarioRuns,
) -> None:
    summary = _run(scenario_runs)
    details = summary["outcome_details"]
    assert "success" == summary["outcome"]
    assert True is details["escaped"]
    assert ["bob"] == details["helped_by"]
    assert [] == details["refusals"]
    assert [ESCAPE_PLAN] == details["plans_chosen"]


def test_escaping_means_reaching_the_yard_outside_the_locked_exit_door(
    scenario_runs: ScenarioRuns,
) -> None:
    summary = _run(scenario_runs)
    assert "yard" == summary["outcome_details"]["where"]
    assert "reached the yard" in summary["outcome_summary"]


def test_explain_shows_alices_search_tree_with_its_cooperable_nodes(
    warband_cli: Cli, scenario_runs: ScenarioRuns
) -> None:
    ran = scenario_runs.run(SCENARIO)
    ran.summary()  # the run succeeded
    explained = warband_cli("explain", str(ran.log), "--agent", "alice", "--tick", "3")
    assert 0 == explained.returncode, explained.stderr
    tree = explained.stdout.split("search tree:\n", 1)[1]
    assert "GOAP search tree for: at(alice) == yard" in tree
    assert "<- LeaveCell cost=1" in tree
    assert "[cooperable]" in tree
    assert "open(bars-a) == true [any agent]" in tree
    assert "[cooperation] Cooperate[open(bars-a) == true]" in tree
    assert "cooperable nodes: #" in tree
    assert "asks another agent for open(bars-a) == true [any agent]" in tree


@pytest.mark.parametrize(
    ("first_helper", "reason"), [("busy", "busy"), ("dislikes", "dislikes alice")]
)
def test_a_first_helper_who_refuses_sends_alice_to_the_next_one(
    scenario_runs: ScenarioRuns, first_helper: str, reason: str
) -> None:
    details = _run(scenario_runs, "--param", f"first_helper={first_helper}")["outcome_details"]
    assert True is details["escaped"]
    assert [["bob", reason]] == details["refusals"]
    assert ["carol"] == details["helped_by"]


def test_with_nobody_able_to_help_the_escape_is_cancelled_and_alice_rests(
    scenario_runs: ScenarioRuns,
) -> None:
    summary = _run(scenario_runs, "--param", "nobody_able=true")
    details = summary["outcome_details"]
    assert "success" == summary["outcome"]  # cancelling cleanly is what this variant expects
    assert False is details["escaped"]
    assert ["Escape"] == details["cancelled"]
    assert ["bob", "carol", "dave"] == [peer for peer, _ in details["refusals"]]
    assert "goal:Rest: Rest" == details["plans_chosen"][-1]


def test_a_helper_killed_on_the_way_to_the_plate_is_replaced_by_the_next(
    scenario_runs: ScenarioRuns,
) -> None:
    details = _run(scenario_runs, "--param", "kill_helper=true")["outcome_details"]
    assert True is details["escaped"]
    assert [["bob", "failed: left the run"]] == details["refusals"]
    assert ["carol"] == details["helped_by"]
    assert ["bob"] == details["departed"]


@pytest.mark.processes
def test_a_helper_whose_process_is_killed_stays_dead_and_alice_asks_the_next(
    scenario_runs: ScenarioRuns,
) -> None:
    ran = scenario_runs.run(SCENARIO, "--param", "kill_helper=true", placement="processes")
    summary, tmp_path = ran.summary(), ran.log
    details = summary["outcome_details"]
    assert "escaped" == summary["finish_reason"]  # alice ended the run: nothing hung
    assert True is details["escaped"]
    assert ["carol"] == details["helped_by"]
    assert [["bob", "failed: left the run"]] == details["refusals"]
    assert ["bob"] == details["departed"]
    # bob's first process died by SIGKILL; the supervisor's restart found him dead and stopped.
    assert 2 == len(summary["pids"]["bob"])
    restarts = [e for e in _events(tmp_path, "process.restart") if e.get("process") == "bob"]
    assert [-signal.SIGKILL] == [e["code"] for e in restarts]
    killed = _events(tmp_path, "actor.killed")
    assert [summary["pids"]["bob"][0]] == [e["pid"] for e in killed]
    _assert_alice_asks_on_at_the_next_tick(tmp_path)


def _assert_alice_asks_on_at_the_next_tick(log_dir: Path) -> None:
    # bob's departure is a failed cooperation at once: alice does not wait out wait_timeout
    # (40 ticks) for a result a dead helper cannot send.
    [killed] = _events(log_dir, "actor.killed")
    [failed] = _events(log_dir, "cooperation.failed")
    assert ("bob", "left the run") == (failed["helper"], failed["reason"])
    assert killed["tick"] + 1 == failed["tick"]


def test_alice_asks_the_next_helper_at_the_tick_after_bob_is_killed(
    scenario_runs: ScenarioRuns,
) -> None:
    ran = scenario_runs.run(SCENARIO, "--param", "kill_helper=true")
    ran.summary()  # the run succeeded
    _assert_alice_asks_on_at_the_next_tick(ran.log)


@pytest.mark.processes
def test_the_six_conversation_messages_pass_between_separate_processes(
    warband_cli: Cli, scenario_runs: ScenarioRuns
) -> None:
    ran = scenario_runs.run(SCENARIO, placement="processes")
    summary, log_dir = ran.summary(), ran.log
    assert True is summary["outcome_details"]["escaped"]
    assert len(summary["pids"]) >= 5  # broker, world, alice and the helpers apart
    assert "commander" not in summary["pids"]

    trace = warband_cli("trace", str(log_dir), "--format", "mermaid")
    assert 0 == trace.returncode, trace.stderr
    arrows = [line.strip() for line in trace.stdout.splitlines() if "->>" in line]
    for kind in CONVERSATION:
        asks = kind in ("RequestTalk", "RequestCooperation", "EndTalk")
        sender, recipient = ("alice", "bob") if asks else ("bob", "alice")
        assert any(
            line.split("->>")[0].endswith(f"_{sender}") and f"_{recipient}: {kind} (" in line
            for line in arrows
        ), f"{kind} from {sender} to {recipient} missing from the mermaid trace"


@pytest.mark.processes
@pytest.mark.parametrize(
    "param",
    [
        # The scenario's defaults (first_helper=willing): the runs the tests above read.
        pytest.param((), id="first_helper=willing"),
        pytest.param(("--param", "first_helper=busy"), id="first_helper=busy"),
        pytest.param(("--param", "first_helper=dislikes"), id="first_helper=dislikes"),
        pytest.param(("--param", "nobody_able=true"), id="nobody_able=true"),
        pytest.param(("--param", "kill_helper=true"), id="kill_helper=true"),
    ],
)
def test_the_same_messages_flow_in_one_process_and_with_processes(
    scenario_runs: ScenarioRuns, param: tuple[str, ...]
) -> None:
    runs = scenario_runs.placed(SCENARIO, *param, placements=("one", "processes"))
    first, second = runs["one"].summary(), runs["processes"].summary()
    one, many = runs["one"].log, runs["processes"].log
    assert json.dumps(first["outcome_details"]) == json.dumps(second["outcome_details"])
    in_one = _agent_sends(one)
    assert len(in_one) > 40
    assert in_one == _agent_sends(many)
