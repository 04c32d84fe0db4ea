"""Pittman's pirates: the lawful one works and buys, the unlawful one steals; with the bottle
taken after they planned, both drop their plans and brew rum from molasses."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import CommandResult
from tests.runs import ScenarioRuns
from tests.test_cli import _agent_sends

Cli = Callable[..., CommandResult]
SCENARIO = "scenarios/pirate.py"
BREW = "goal:GetDrunk: Goto(storehouse) CollectMolasses Goto(still) BrewRum DrinkRum"


def _run(runs: ScenarioRuns, *args: str) -> dict[str, Any]:
    """The summary of the session's run of the scenario with ``args`` (tests/runs.py)."""
    return runs.run(SCENARIO, *args).summary()


def test_the_lawful_pirate_works_for_gold_and_buys_while_the_unlawful_one_steals(
    scenario_runs: ScenarioRuns,
) -> None:
    summary = _run(scenario_runs)
    jack, anne = (summary["outcome_details"]["pirates"][name] for name in ("jack", "anne"))
    assert "success" == summary["outcome"]
    assert ["goal:GetDrunk: Goto(docks) WorkForGold Goto(tavern) BuyRum DrinkRum"] == jack[
        "plans_chosen"
    ]
    assert ["goto", "work", "goto", "buy", "drink"] == jack["acts"]
    assert "bought" == jack["rum_from"]
    assert ["goal:GetDrunk: Goto(tavern) StealRum DrinkRum"] == anne["plans_chosen"]
    assert "stolen" == anne["rum_from"]
    assert [] == jack["drops"] == anne["drops"]
    assert True is jack["drunk"] is anne["drunk"]


def test_a_bottle_removed_after_planning_makes_each_pirate_replan_to_brew_rum(
    scenario_runs: ScenarioRuns,
) -> None:
    summary = _run(scenario_runs, "--param", "remove_bottle=true")
    pirates = summary["outcome_details"]["pirates"]
    assert "success" == summary["outcome"]
    for name in ("jack", "anne"):
        pirate = pirates[name]
        assert 2 == len(pirate["plans_chosen"]), name
        assert "BuyRum" in pirate["plans_chosen"][0] or "StealRum" in pirate["plans_chosen"][0]
        assert BREW == pirate["plans_chosen"][1]
        assert ["the rest of the plan no longer replays"] == pirate["drops"]
        assert "brewed" == pirate["rum_from"]
        assert "buy" not in pirate["acts"] and "steal" not in pirate["acts"]
    assert "WorkForGold" in pirates["jack"]["plans_chosen"][0]
    assert "StealRum" in pirates["anne"]["plans_chosen"][0]


@pytest.mark.processes
@pytest.mark.parametrize(
    "args",
    [
        # The scenario's defaults (remove_bottle=false): the run the first test reads.
        pytest.param((), id="remove_bottle=false"),
        pytest.param(("--param", "remove_bottle=true"), id="remove_bottle=true"),
    ],
)
def test_the_same_messages_flow_in_one_process_and_with_processes(
    scenario_runs: ScenarioRuns, args: tuple[str, ...]
) -> None:
    runs = scenario_runs.placed(SCENARIO, *args, placements=("one", "processes"))
    first, second = runs["one"].summary(), runs["processes"].summary()
    one, many = runs["one"].log, runs["processes"].log
    assert json.dumps(first["outcome_details"]) == json.dumps(second["outcome_details"])
    assert len(second["pids"]) >= 4  # broker, world and each pirate apart
    in_one = _agent_sends(one)
    assert len(in_one) > 20
    assert in_one == _agent_sends(many)
