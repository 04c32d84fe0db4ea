"""Pittman's command hierarchy on the agent loop: commands as goal biases, adoption and
completion reports, a command that times out, and a commander whose interruption interrupts
its subordinates."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from warband.agents import Agent, Role
from warband.agents.command import Commander, Commanding, Subordinate, command_task, target_of
from warband.agents.execute import TaskStatus
from warband.exceptions import ConfigurationError
from warband.messaging import Actor, GoalBias, StatusReport, handles
from warband.messaging.codec import Codec
from warband.planning import Action, Brain, FactDB, Goal, Task, WorldState
from warband.testing import run_actors


def _hold(agent: Agent, task: Task) -> TaskStatus:
    return agent.hold_task(task)  # never finishes by itself: only an interruption ends it


def _done(flag: str) -> Any:
    def run(agent: Agent, task: Task) -> TaskStatus:
        agent.memory.remember(flag)
        return "done"

    return run


def _member_role(*, charge_lasts: bool = False) -> Role:
    brain = Brain(
        "member",
        goals=[Goal("Assault", ["assaulted == true"], relevancy=0.0)],
        actions=[Action("Charge", effects={"assaulted": True})],
    )
    charge = _hold if charge_lasts else _done("assaulted")
    return Role("member", brain, tasks={"Charge": charge}, task_timeout=100)


def _leader_state(facts: FactDB) -> WorldState:
    # The leader attacked once its command was done (what Commander remembers).
    done = {fact[1] for fact in facts.facts("command_done")}
    return WorldState({"attacked": "Assault" in done, "retreated": False})


def _leader_role(timeout: int, target: str | None = None) -> Role:
    brain = Brain(
        "leader",
        goals=[
            Goal("Attack", ["attacked == true"], relevancy=1.0),
            Goal("Retreat", ["retreated == true"], relevancy=0.0),
        ],
        actions=[
            Action("OrderAssault", effects={"attacked": True}),
            Action("FallBack", effects={"retreated": True}),
        ],
    )
    tasks = {
        "OrderAssault": command_task(
            "Assault", bias=1.0, timeout=timeout, target=(lambda task: target) if target else None
        ),
        "FallBack": _hold,
    }
    options = {"state": _leader_state}
    return Role("leader", brain, tasks=tasks, task_timeout=100, decider_options=options)


class Superior(Actor):
    """Recommends Assault at tick 1 and records the reports."""

    def __init__(self, actor_id: str) -> None:
        super().__init__(actor_id)
        self.reports: list[list[Any]] = []

    def on_tick(self, tick: int) -> None:
        if tick == 1:
            self.send(GoalBias(recipient="m1", goal="Assault", bias=1.0))
        if tick == 4:
            self.send(GoalBias(recipient="m1", goal="Assault", bias=0.0))

    @handles(StatusReport)
    def on_status(self, report: StatusReport) -> None:
        self.reports.append([report.status, report.details.get("a0")])

    def final_state(self) -> dict[str, Any]:
        return {"reports": self.reports}


async def test_a_subordinate_reports_when_it_adopts_and_completes_a_recommended_goal() -> None:
    member = Subordinate("m1", _member_role(), superior="boss")
    result = await run_actors([Superior("boss"), member], ticks=6)
    assert [["adopted", "Assault"], ["completed", "Assault"]] == result.final_states["boss"][
        "reports"
    ]
    assert ["Assault"] == result.final_states["m1"]["completed"]


async def test_a_withdrawn_recommendation_interrupts_the_subordinates_running_plan() -> None:
    member = Subordinate("m1", _member_role(charge_lasts=True), superior="boss")
    result = await run_actors([Superior("boss"), member], ticks=7)
    state = result.final_states["m1"]
    assert ["Assault"] == state["adopted"]
    assert [] == state["completed"]
    assert ["Assault"] == state["interrupted"]
    assert None is state["plan"]


async def test_a_command_completes_when_every_subordinate_reported_completion() -> None:
    leader = Commander("lead", _leader_role(timeout=10), subordinates=["m1", "m2"])
    members = [Subordinate(m, _member_role(), superior="lead") for m in ("m1", "m2")]
    result = await run_actors([leader, *members], ticks=8)
    state = result.final_states["lead"]
    assert ["Assault"] == state["commands_done"]
    assert [] == state["commands_failed"]
    assert [["m1", "completed"], ["m2", "completed"]] == sorted(
        [r[1], r[2]] for r in state["reports"] if r[2] == "completed"
    )


async def test_a_command_a_subordinate_never_completes_fails_after_its_time_out() -> None:
    leader = Commander("lead", _leader_role(timeout=4), subordinates=["m1", "m2"])
    members = [
        Subordinate("m1", _member_role(), superior="lead"),
        Subordinate("m2", _member_role(charge_lasts=True), superior="lead"),
    ]
    result = await run_actors([leader, *members], ticks=8)
    state = result.final_states["lead"]
    assert [] == state["commands_done"]
    assert 1 <= len(state["commands_failed"])
    assert "m2 did not report completion" in state["commands_failed"][0]
    assert ["Assault"] == result.final_states["m2"]["interrupted"][:1]


async def test_a_commander_whose_plan_is_replaced_interrupts_its_subordinates() -> None:
    class Alarm(Actor):
        def on_tick(self, tick: int) -> None:
            if tick == 4:  # the commander is told to retreat mid-assault
                self.send(GoalBias(recipient="lead", goal="Retreat", bias=3.0))

    leader = Commander("lead", _leader_role(timeout=50), subordinates=["m1"])
    member = Subordinate("m1", _member_role(charge_lasts=True), superior="lead")
    result = await run_actors([Alarm("alarm"), leader, member], ticks=9)
    assert "goal:Retreat" == result.final_states["lead"]["plan"]
    assert ["Assault"] == result.final_states["m1"]["adopted"]
    assert ["Assault"] == result.final_states["m1"]["interrupted"]


def test_a_command_with_no_positive_bias_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="bias must be positive"):
        command_task("Assault", bias=0.0)


def _patroller_role() -> Role:
    brain = Brain(
        "member",
        goals=[
            Goal("Patrol", ["patrolled == true"], relevancy=0.5),
            Goal("Assault", ["assaulted == true"], relevancy=0.0),
        ],
        actions=[
            Action("Walk", effects={"patrolled": True}),
            Action("Charge", effects={"assaulted": True}),
        ],
    )
    return Role("member", brain, tasks={"Walk": _hold, "Charge": _done("assaulted")})


def _weak_leader_role(discourage: dict[str, float] | None) -> Role:
    brain = Brain(
        "leader",
        goals=[Goal("Attack", ["attacked == true"], relevancy=1.0)],
        actions=[Action("OrderAssault", effects={"attacked": True})],
    )
    order = command_task("Assault", bias=0.3, timeout=4, discourage=discourage)
    options = {"state": _leader_state}
    return Role("leader", brain, tasks={"OrderAssault": order}, decider_options=options)


async def test_a_weak_recommendation_loses_to_a_relevant_goal_unless_that_is_discouraged() -> None:
    async def run(discourage: dict[str, float] | None) -> dict[str, Any]:
        leader = Commander("lead", _weak_leader_role(discourage), subordinates=["m1"])
        member = Subordinate("m1", _patroller_role(), superior="lead")
        result = await run_actors([leader, member], ticks=6)
        return {"lead": result.final_states["lead"], "m1": result.final_states["m1"]}

    plain = await run(None)  # Assault 0 + 0.3 < Patrol 0.5: the member goes on patrolling
    assert [] == plain["m1"]["adopted"]
    assert "goal:Patrol" == plain["m1"]["plan"]
    assert [] == plain["lead"]["commands_done"]
    pressed = await run({"Patrol": -1.0})  # Patrol discouraged: its plan ends, Assault wins
    assert ["Assault"] == pressed["m1"]["adopted"]
    assert ["Assault"] == pressed["m1"]["completed"]
    assert ["Assault"] == pressed["lead"]["commands_done"]


def test_a_command_that_would_encourage_what_it_discourages_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="discouraging bias negative"):
        command_task("Assault", discourage={"Patrol": 0.5})


class Listener(Actor):
    """A subordinate that only records what its superior sends."""

    def __init__(self, actor_id: str) -> None:
        super().__init__(actor_id)
        self.biases: list[list[Any]] = []
        self.statuses: list[str] = []

    @handles(GoalBias)
    def on_goal_bias(self, bias: GoalBias) -> None:
        self.biases.append([bias.goal, bias.bias, bias.target])

    @handles(StatusReport)
    def on_status(self, report: StatusReport) -> None:
        self.statuses.append(report.status)

    def final_state(self) -> dict[str, Any]:
        return {"biases": self.biases, "statuses": self.statuses}


async def test_a_command_sends_its_goals_target_in_the_goal_bias_itself() -> None:
    leader = Commander("lead", _leader_role(timeout=3, target="room-2"), subordinates=["m1"])
    result = await run_actors([leader, Listener("m1")], ticks=6)
    state = result.final_states["m1"]
    assert ["Assault", 1.0, "room-2"] == state["biases"][0]
    assert [] == state["statuses"]  # no StatusReport("target") on the side any more


async def test_a_subordinate_knows_a_recommended_goals_target_until_it_is_withdrawn() -> None:
    class Pointer(Actor):
        def on_tick(self, tick: int) -> None:
            if tick == 1:
                self.send(GoalBias(recipient="m1", goal="Assault", bias=1.0, target="room-2"))
            if tick == 4:
                self.send(GoalBias(recipient="m1", goal="Assault", bias=0.0))

    member = Subordinate("m1", _member_role(charge_lasts=True), superior="boss")
    seen: dict[int, Any] = {}
    original = member.on_tick

    def watch(tick: int) -> None:
        original(tick)
        seen[tick] = target_of(member.memory.facts, "Assault")

    member.on_tick = watch  # type: ignore[method-assign]
    await run_actors([Pointer("boss"), member], ticks=6)
    assert "room-2" == seen[3]
    assert None is seen[6]


def test_a_goal_bias_from_a_peer_that_leaves_the_target_out_has_none() -> None:
    frame = msgspec.msgpack.encode(
        {
            "type": "GoalBias",
            "sender": "lead",
            "recipient": "m1",
            "id": "lead:1",
            "seq": 1,
            "goal": "Assault",
            "bias": 1.0,
        }
    )
    decoded = Codec().decode(frame)
    assert isinstance(decoded, GoalBias)
    assert None is decoded.target


def test_a_commander_must_give_a_member_at_least_one_time_out_before_dropping_it() -> None:
    with pytest.raises(ConfigurationError, match="drop_after must be at least 1"):
        Commanding(drop_after=0)
