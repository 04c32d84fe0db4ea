"""Pittman's room clearing: a squad leader commands four members by goal bias, room after room;
the members plan for themselves and report back before the squad moves on; a member that never
completes makes the command time out instead of stalling the squad."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import CommandResult
from tests.runs import ScenarioRuns
from tests.test_cli import _agent_sends

Cli = Callable[..., CommandResult]
SCENARIO = "scenarios/room_clearing.py"
MEMBERS = ("alpha", "bravo", "charlie", "delta")
ORDERS = ["StackUp", "ClearCorner"] * 3


def _run(runs: ScenarioRuns, *args: str) -> dict[str, Any]:
    """The summary of the session's run of the scenario with ``args`` (tests/runs.py)."""
    return runs.run(SCENARIO, *args).summary()


def test_the_squad_clears_every_room_in_order_stacking_up_before_clearing(
    scenario_runs: ScenarioRuns,
) -> None:
    summary = _run(scenario_runs)
    details = summary["outcome_details"]
    assert "success" == summary["outcome"]
    assert ["room-1", "room-2", "room-3"] == details["rooms_cleared"]
    assert ORDERS == details["commands_done"]
    assert [] == details["commands_failed"]
    for name in MEMBERS:
        assert ORDERS == details["members"][name]["adopted"], name
        assert ORDERS == details["members"][name]["completed"], name
        assert [] == details["members"][name]["interrupted"], name


def test_every_member_reports_completion_before_the_squad_moves_on(
    scenario_runs: ScenarioRuns,
) -> None:
    reports = _run(scenario_runs)["outcome_details"]["reports"]
    assert 2 * len(ORDERS) * len(MEMBERS) == len(reports)
    completed = 0
    adopted = 0
    for _tick, _member, status, goal in reports:
        if status == "adopted":
            # An order is adopted only once all four completed the order before it.
            assert len(MEMBERS) * (adopted // len(MEMBERS)) <= completed
            assert ORDERS[adopted // len(MEMBERS)] == goal
            adopted += 1
        else:
            completed += 1
    assert len(ORDERS) * len(MEMBERS) == adopted == completed


def test_a_member_that_never_completes_is_dropped_and_the_others_clear_its_corners(
    scenario_runs: ScenarioRuns,
) -> None:
    summary = _run(scenario_runs, "--param", "stuck=charlie", "--param", "timeout=8")
    details = summary["outcome_details"]
    assert "success" == summary["outcome"]
    assert ["room-1", "room-2", "room-3"] == details["rooms_cleared"]
    # Two time-outs in a row, then the leader goes on without charlie (Pittman: no stall).
    failures = details["commands_failed"]
    assert 2 == len(failures)
    assert all("charlie did not report completion" in reason for reason in failures)
    assert ["charlie"] == details["members_dropped"]
    charlie = details["members"]["charlie"]
    assert ["StackUp"] == charlie["completed"]  # it never cleared a corner...
    assert len(failures) == len(charlie["interrupted"])  # ...and each time-out withdrew the order
    # It adopted each of the two orders it was given, and was given none after.
    assert ["StackUp"] + ["ClearCorner"] * len(failures) == charlie["adopted"]
    cleared_by = {m: details["members"][m]["completed"].count("ClearCorner") for m in MEMBERS}
    # The three left clear every room, charlie's corner shared out among them (alpha's turn).
    for name in ("alpha", "bravo", "delta"):
        assert details["members"][name]["completed"][-2:] == ["StackUp", "ClearCorner"], name
        assert cleared_by[name] >= 3, (name, cleared_by)


@pytest.mark.processes
@pytest.mark.parametrize(
    ("params", "outcome"),
    [
        (("rooms=2",), "success"),
        ((), "success"),  # the scenario's defaults (rooms=3): the runs the tests above read
        (("stuck=charlie", "timeout=8"), "success"),
    ],
)
def test_the_same_messages_flow_in_one_process_and_with_processes(
    scenario_runs: ScenarioRuns, params: tuple[str, ...], outcome: str
) -> None:
    args = [arg for param in params for arg in ("--param", param)]
    runs = scenario_runs.placed(SCENARIO, *args, placements=("one", "processes"))
    first, second = runs["one"].summary(), runs["processes"].summary()
    one, many = runs["one"].log, runs["processes"].log
    assert outcome == second["outcome"]
    assert json.dumps(first["outcome_details"]) == json.dumps(second["outcome_details"])
    assert len(second["pids"]) >= 6  # broker, world, the leader and each member apart
    in_one = _agent_sends(one)
    assert len(in_one) > 50
    assert in_one == _agent_sends(many)


def test_more_rooms_than_the_rooms_map_has_is_an_error_naming_the_range(warband_cli: Cli) -> None:
    result = warband_cli("run", SCENARIO, "-q", "--param", "rooms=4")
    assert 0 != result.returncode
    assert "the rooms map has rooms 1 to 3" in result.stderr
