"""F.E.A.R.: soldier, assassin and rat share a goal set and behave apart; the blocked door makes
the soldier replan twice (kick, then window) because each failure stays in working memory."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import CommandResult
from tests.runs import ScenarioRuns
from tests.test_cli import _agent_sends
from warband.agents.character import FAILED, WorkingMemory

Cli = Callable[..., CommandResult]
SCENARIO = "scenarios/fear.py"


def _run(runs: ScenarioRuns, *args: str) -> dict[str, Any]:
    """The summary of the session's run of the scenario with ``args`` (tests/runs.py)."""
    return runs.run(SCENARIO, *args).summary()


def test_the_soldier_fires_the_assassin_lunges_and_the_rat_only_patrols(
    scenario_runs: ScenarioRuns,
) -> None:
    summary = _run(scenario_runs)
    characters = summary["outcome_details"]["characters"]
    assert "success" == summary["outcome"]
    soldier, assassin, rat = characters["soldier"], characters["assassin"], characters["rat"]
    assert ["goal:KillEnemy: OpenDoor EnterWarehouse Attack"] == soldier["plans_chosen"]
    assert ["open_door", "enter", "fire"] == soldier["acts"]
    assert "warehouse" == soldier["position"]
    assert ["goal:KillEnemy: Cloak StickToWall LungeFromWall"] == assassin["plans_chosen"]
    assert "beside-player" == assassin["position"]
    assert True is assassin["enemy_dead"]
    assert ["goal:Patrol: Patrol"] == rat["plans_chosen"]
    assert ["patrol"] == rat["acts"]
    assert False is rat["enemy_dead"]
    assert [] == soldier["failures"] == assassin["failures"] == rat["failures"]


def test_a_blocked_door_makes_the_soldier_kick_it_then_dive_through_the_window(
    scenario_runs: ScenarioRuns,
) -> None:
    summary = _run(scenario_runs, "--param", "door_blocked=true")
    soldier = summary["outcome_details"]["characters"]["soldier"]
    assert "success" == summary["outcome"]
    assert [
        "goal:KillEnemy: OpenDoor EnterWarehouse Attack",
        "goal:KillEnemy: KickDoor EnterWarehouse Attack",
        "goal:KillEnemy: DiveThroughWindow AttackMelee",
    ] == soldier["plans_chosen"]
    assert ["OpenDoor", "KickDoor"] == [action for action, _ in soldier["failures"]]
    assert ["dive", "melee"] == soldier["acts"]
    assert "beside-player" == soldier["position"]
    assert True is soldier["enemy_dead"]


def test_a_soldier_that_forgets_failures_tries_the_blocked_door_until_time_is_up(
    scenario_runs: ScenarioRuns,
) -> None:
    summary = _run(scenario_runs, "--param", "door_blocked=true", "--param", "failure_ticks=0")
    soldier = summary["outcome_details"]["characters"]["soldier"]
    assert "failure" == summary["outcome"]
    assert {"goal:KillEnemy: OpenDoor EnterWarehouse Attack"} == set(soldier["plans_chosen"])
    assert len(soldier["failures"]) > 10
    assert "corridor" == soldier["position"]
    assert False is soldier["enemy_dead"]


def test_working_memory_fades_unseen_beliefs_and_forgets_failures_after_their_lifetime() -> None:
    memory = WorkingMemory(decay=0.25, forget_below=0.3, failure_ticks=3)
    memory.perceive([("sees", "soldier", "player")], tick=0)
    memory.note_failure("OpenDoor", tick=0)
    memory.age(2)
    assert ("confidence", "sees", "soldier", 0.5, 2) in memory.facts(2)
    assert frozenset({"OpenDoor"}) == memory.failed()
    memory.age(3)
    assert frozenset() == memory.failed()
    assert (FAILED, "OpenDoor") not in memory.facts(3)
    memory.age(4)  # confidence 0: forgotten
    assert [] == memory.facts(4)


def test_a_belief_perceived_again_is_fully_trusted_again() -> None:
    memory = WorkingMemory(decay=0.1)
    memory.perceive([("at", "player", "warehouse")], tick=0)
    memory.age(3)
    memory.perceive([("at", "player", "roof")], tick=3)
    memory.age(3)
    assert [("at", "player", "roof"), ("confidence", "at", "player", 1.0, 0)] == memory.facts(3)


def test_explain_shows_the_failures_in_working_memory_behind_the_dive(
    warband_cli: Cli, scenario_runs: ScenarioRuns
) -> None:
    ran = scenario_runs.run(SCENARIO, "--param", "door_blocked=true")
    ran.summary()  # the run succeeded
    explained = warband_cli("explain", str(ran.log), "--agent", "soldier", "--tick", "3")
    assert 0 == explained.returncode, explained.stderr
    plan = explained.stdout.split("memory:")[0]
    assert "(DiveThroughWindow)" in plan
    assert "(failed OpenDoor)" in explained.stdout
    assert "(failed KickDoor)" in explained.stdout


@pytest.mark.processes
@pytest.mark.parametrize(
    "params",
    [
        (),  # the scenario's defaults (door_blocked=false): the run the tests above read
        ("door_blocked=true",),
        ("door_blocked=true", "failure_ticks=0"),
    ],
)
def test_the_same_messages_flow_in_one_process_and_with_processes(
    scenario_runs: ScenarioRuns, params: tuple[str, ...]
) -> None:
    args = [arg for param in params for arg in ("--param", param)]
    runs = scenario_runs.placed(SCENARIO, *args, placements=("one", "processes"))
    first, second = runs["one"].summary(), runs["processes"].summary()
    one, many = runs["one"].log, runs["processes"].log
    assert json.dumps(first["outcome_details"]) == json.dumps(second["outcome_details"])
    assert len(second["pids"]) >= 5  # broker, world and each character apart
    in_one = _agent_sends(one)
    assert len(in_one) > 20
    assert in_one == _agent_sends(many)
