"""A GOAP agent on the one loop: the most relevant goal with a plan, a superior's biases, and
plans dropped when what remains of them no longer replays."""

from __future__ import annotations

from typing import Any

import pytest

from warband.agents import Agent, Role
from warband.agents.execute import TaskStatus
from warband.exceptions import ConfigurationError
from warband.messaging import Actor, GoalBias
from warband.planning import Action, Brain, Goal, Task
from warband.testing import run_actors


def _done(flag: str) -> Any:
    def run(agent: Agent, task: Task) -> TaskStatus:
        agent.memory.remember(flag)
        return "done"

    return run


BRAIN = Brain(
    "guard",
    goals=[
        Goal("Guard", ["guarded == true"], relevancy=0.5),
        Goal("Patrol", ["patrolled == true"], relevancy=0.3),
    ],
    actions=[
        Action("Guard", effects={"guarded": True}),
        Action("Patrol", effects={"patrolled": True}),
    ],
)


class Recorder(Agent):
    def final_state(self) -> dict[str, Any]:
        return {**super().final_state(), "decisions": [list(d) for d in self.recent_decisions]}


def _role() -> Role:
    return Role("guard", BRAIN, tasks={"Guard": _done("guarded"), "Patrol": _done("patrolled")})


async def test_the_most_relevant_goal_with_a_plan_is_pursued_first() -> None:
    result = await run_actors([Recorder("guard-1", _role())], ticks=4)
    decisions = result.final_states["guard-1"]["decisions"]
    assert "goal:Guard" == decisions[0][2]
    assert "goal:Patrol" in [d[2] for d in decisions]  # once guarding holds, patrol is next


async def test_a_superiors_bias_makes_a_lower_goal_replace_the_running_one() -> None:
    class Superior(Actor):
        def on_tick(self, tick: int) -> None:
            if tick == 1:
                self.send(GoalBias(recipient="guard-1", goal="Patrol", bias=0.5))

    def stand_guard(agent: Agent, task: Task) -> TaskStatus:
        agent.memory.remember("guarded")
        return agent.wait_task(10)  # guarding lasts

    role = Role("guard", BRAIN, tasks={"Guard": stand_guard, "Patrol": _done("patrolled")})
    guard = Recorder("guard-1", role)
    result = await run_actors([Superior("captain"), guard], ticks=4)
    decisions = [(d[1], d[2]) for d in result.final_states["guard-1"]["decisions"]]
    assert ("new", "goal:Guard") == decisions[0]
    assert ("replaced", "goal:Patrol") in decisions
    assert ("goal_bias", "Patrol", 0.5) in set(guard.memory.facts)


def test_a_brain_whose_action_nothing_executes_is_refused() -> None:
    with pytest.raises(ConfigurationError, match="nothing executes: Patrol"):
        Role("guard", BRAIN, tasks={"Guard": _done("guarded")})
